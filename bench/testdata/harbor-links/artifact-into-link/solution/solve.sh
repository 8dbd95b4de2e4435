#!/bin/bash
echo from-the-sandbox > /app/real
