#!/usr/bin/env bash
# expect_exit.sh STATUS REGEX COMMAND [ARGS...]
# Runs COMMAND; passes when it exits with STATUS and its combined output
# (newlines folded to spaces) matches the extended REGEX.
expected=$1; regex=$2; shift 2
out=$("$@" 2>&1); status=$?
folded=$(printf '%s' "$out" | tr '\n' ' ')
if [[ $status -ne $expected ]]; then
  printf 'exit status %s, expected %s\n--- output ---\n%s\n' "$status" "$expected" "$out"; exit 1
fi
if [[ -n "$regex" ]] && ! grep -Eq -- "$regex" <<<"$folded"; then
  printf 'output does not match /%s/\n--- output ---\n%s\n' "$regex" "$out"; exit 1
fi
