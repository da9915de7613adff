#!/usr/bin/env bash
# Runs every test file that reads the real transcripts (../shared/real-transcripts) with them
# absent and no services or CI set, as in a clone with nothing beside it: each such suite must skip
# with its reason printed, never fail. CI has the transcripts, so its main run cannot see this.
set -euo pipefail
cd "$(dirname "$0")/../../.."
READERS='realTranscripts|REAL_TRANSCRIPTS_DIR'
# Test helpers that read them, by module name: a test file importing one reads them too.
helpers=$({ grep -rlE --include='*.ts' "$READERS" packages/*/test apps/*/test || true; } |
  { grep -v '\.test\.ts$' || true; } | xargs -r -n1 basename | sed 's/\.ts$//' | sort -u | paste -sd'|' -)
pattern="$READERS${helpers:+|/($helpers)(\\.js)?\"}"
for project in packages/* apps/*; do
  [ -d "$project/test" ] || continue
  files=$({ grep -rlE --include='*.test.ts' "$pattern" "$project/test" || true; } | sed "s|^$project/||" | sort)
  [ -n "$files" ] || continue
  echo "-- $project: $(echo "$files" | wc -l) file(s)"
  # shellcheck disable=SC2086 # one argument per file
  (cd "$project" && env -u CI -u DATABASE_URL -u S3_ENDPOINT \
    STOWAGE_REAL_TRANSCRIPTS_DIR=/nonexistent/real-transcripts/ npx vitest run $files)
done
