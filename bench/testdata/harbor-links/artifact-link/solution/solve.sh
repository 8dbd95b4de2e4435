#!/bin/bash
# Artifacts that are links to a file of the host, which the sandbox
# cannot read: harness must not copy it out for the agent. A link inside
# the environment is kept as a link.
ln -s "$HARNESS_LINK_SECRET" /app/link
mkdir -p /app/dir
ln -s "$HARNESS_LINK_SECRET" /app/dir/secret
echo kept > /app/dir/kept.txt
# What the agent leaves in /logs/artifacts is kept too (Harbor's convention).
echo from-the-agent > /logs/artifacts/agent.txt
