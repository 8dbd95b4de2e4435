#!/bin/bash
if [ "$(cat /logs/agent/user)" = nobody ] && [ "$(id -un)" = daemon ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "agent=$(cat /logs/agent/user) verifier=$(id -un)"
  echo 0 > /logs/verifier/reward.txt
fi
