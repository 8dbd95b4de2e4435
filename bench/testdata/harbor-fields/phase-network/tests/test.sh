#!/bin/bash
# The agent saw loopback only; the verifier sees more.
ifaces=$(awk 'NR > 2 { sub(":", "", $1); print $1 }' /proc/net/dev | sort | tr '\n' ' ')
if [ "$(cat /app/offline.txt)" = "lo " ] && [ "$ifaces" != "lo " ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "agent: $(cat /app/offline.txt) verifier: $ifaces"
  echo 0 > /logs/verifier/reward.txt
fi
