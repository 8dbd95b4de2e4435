#!/bin/bash
echo done > done.txt
