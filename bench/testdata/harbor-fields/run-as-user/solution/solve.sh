#!/bin/bash
id -un > /logs/agent/user
