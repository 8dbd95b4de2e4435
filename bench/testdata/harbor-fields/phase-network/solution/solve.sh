#!/bin/bash
awk 'NR > 2 { sub(":", "", $1); print $1 }' /proc/net/dev | sort | tr '\n' ' ' > /app/offline.txt
