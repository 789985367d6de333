#!/usr/bin/env bash
# check_repository.sh ROOT
# The repository names no address to download from (packages come through
# apt, which finds the machine's own archive), and carries its own format
# document, which README and the help texts point at.
root=$1
status=0
if hits=$(cd "$root" && git grep -n -I -E '(https?|ftp)://' -- . 2>/dev/null) && [[ -n "$hits" ]]; then
  printf 'files name a network address:\n%s\n' "$hits"
  status=1
fi
for doc in docs/program-format.md docs/design.md; do
  [[ -s "$root/$doc" ]] || { echo "missing $doc"; status=1; }
done
grep -q 'docs/program-format.md' "$root/README.md" || { echo "README does not point at docs/program-format.md"; status=1; }
if grep -rn -E '\.\./shared/' "$root/README.md" "$root/docs" "$root/examples/README.md" >/dev/null; then
  echo "README or docs point outside the repository (../shared/)"
  status=1
fi
grep -q '^- \*\*Names\*\*' "$root/docs/program-format.md" || { echo "docs/program-format.md lacks the Names decision"; status=1; }
exit $status
