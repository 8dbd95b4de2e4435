#!/bin/bash
set -e
test -f /app/count.txt
[ "$(tr -d ' \n' < /app/count.txt)" = 3 ]
