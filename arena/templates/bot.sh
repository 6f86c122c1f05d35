#!/bin/sh
# {name}: a cardarena bot in POSIX sh (protocol v1: one JSON object per line on stdin/stdout).
# Check it:  arena doctor agram -- sh {path}
# It plays the first legal action. `read` takes one line at a time and printf writes it at
# once, so nothing waits for the end of input and nothing sits in a buffer. Logs go to
# stderr (>&2).
while IFS= read -r line; do
  case "$line" in
    *'"type":"start"'*)
      printf '%s\n' '{{"type":"ready","protocol":1,"name":"{name}","version":"1"}}' ;;
    *'"type":"act"'*)
      # the message begins {{"type":"act","id":N,... and ends ...,"legal":["a","b"],"clock":{{...}}}}
      id=$(printf '%s\n' "$line" | sed 's/^{{"type":"act","id":\([0-9]*\).*/\1/')
      action=$(printf '%s\n' "$line" | sed 's/.*"legal":\["\([^"]*\)".*/\1/')
      printf '{{"type":"action","id":%s,"action":"%s"}}\n' "$id" "$action" ;;
    *'"type":"end"'*)
      echo "{name}: match over" >&2 ;;
  esac
done
exit 0
