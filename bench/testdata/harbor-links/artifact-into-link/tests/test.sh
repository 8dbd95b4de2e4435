#!/bin/bash
# Where the artifact /app/real is copied to, a link to a directory of the
# host: harness must not write there for the verifier.
mkdir -p /logs/artifacts
ln -s "$HARNESS_LINK_VICTIM" /logs/artifacts/app
echo 1 > /logs/verifier/reward.txt
