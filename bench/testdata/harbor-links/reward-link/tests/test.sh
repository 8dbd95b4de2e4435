#!/bin/bash
# A reward that is a link to a file of the host, which the verifier
# cannot read: harness must not read it for the verifier.
ln -s "$HARNESS_LINK_SECRET" /logs/verifier/reward.txt
