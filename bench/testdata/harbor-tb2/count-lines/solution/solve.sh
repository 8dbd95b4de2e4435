#!/bin/bash
# Terminal-bench's solutions are run from WORKDIR.
wc -l < data.txt > count.txt
