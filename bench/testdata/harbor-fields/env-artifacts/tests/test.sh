#!/bin/bash
# The environment's env and the verifier's own are set; the token is
# printed to show it is redacted from the report.
echo "token: $API_TOKEN"
if [ "$(cat /app/out.txt)" = hello ] && [ "$TASK_GREETING" = hello ] && [ "$CHECK" = yes ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "out=$(cat /app/out.txt) greeting=$TASK_GREETING check=$CHECK"
  echo 0 > /logs/verifier/reward.txt
fi
