#!/bin/bash
# Run in the image's WORKDIR (/work), the image's own file there.
if [ "$PWD" = /work ] && [ -f /etc/prebuilt-marker ] && [ "$(cat /work/done.txt)" = done ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "pwd=$PWD marker=$(ls /etc/prebuilt-marker) done=$(cat /work/done.txt)"
  echo 0 > /logs/verifier/reward.txt
fi
