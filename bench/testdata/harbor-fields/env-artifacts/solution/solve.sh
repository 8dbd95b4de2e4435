#!/bin/bash
echo "$TASK_GREETING" > /app/out.txt
mkdir -p /app/dir && echo a > /app/dir/a.txt && echo b > /app/dir/b.tmp
