/* {name}: a cardarena bot in C (protocol v1: one JSON object per line on stdin/stdout).
 *
 * Build:     cc -O2 -Wall -o bot bot.c
 * Check it:  arena doctor agram -- ./bot
 *
 * It answers "start" with "ready" and every "act" with a random one of its "legal" actions,
 * echoing the request id. Two rules the arena needs from a C bot:
 *   - read stdin one line at a time (getline), never waiting for the end of input;
 *   - write each reply as one line ending in '\n' and fflush(stdout) at once: a pipe is
 *     block-buffered, and an unflushed 'ready' is a "stall" at start-up.
 * Logs go to stderr. A real bot parses the observation with a JSON library (cJSON, jansson);
 * this one only needs the id and the legal strings, found by their place in the message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEGAL 4096

static unsigned long long rng_state = 1;

static unsigned long long next_random(void) {{ /* xorshift64*: reseeded at every start */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}}

/* the strings of the "legal" array, copied into buf; returns how many */
static int legal_actions(const char *line, char *buf, char **legal) {{
  const char *p = NULL, *q;
  for (q = strstr(line, "\"legal\":["); q; q = strstr(q + 1, "\"legal\":[")) p = q; /* the last one */
  if (!p) return 0;
  p += strlen("\"legal\":[");
  int n = 0;
  while (*p == '"' && n < MAX_LEGAL) {{
    legal[n++] = buf;
    for (p++; *p && *p != '"'; p++) {{
      if (*p == '\\' && p[1]) p++; /* keep escaped characters as they are */
      *buf++ = *p;
    }}
    *buf++ = '\0';
    if (*p == '"') p++;
    if (*p == ',') p++;
  }}
  return n;
}}

int main(void) {{
  char *line = NULL, *buf = NULL, *legal[MAX_LEGAL];
  size_t cap = 0;
  ssize_t len;
  int seat = 0;
  while ((len = getline(&line, &cap, stdin)) > 0) {{
    if (strstr(line, "\"type\":\"start\"")) {{
      const char *s = strstr(line, "\"seed\":");
      rng_state = s ? strtoull(s + 7, NULL, 10) | 1 : 1;
      const char *t = strstr(line, "\"seat\":");
      seat = t ? atoi(t + 7) : 0;
      printf("{{\"type\":\"ready\",\"protocol\":1,\"name\":\"{name}\",\"version\":\"1\"}}\n");
      fflush(stdout);
    }} else if (strstr(line, "\"type\":\"act\"")) {{
      long id = strtol(strstr(line, "\"id\":") + 5, NULL, 10);
      buf = realloc(buf, (size_t)len + 1);
      int n = legal_actions(line, buf, legal);
      if (n == 0) {{ fprintf(stderr, "{name}: no legal actions in act %ld\n", id); return 1; }}
      /* replace the random choice with your strategy */
      const char *action = legal[next_random() % (unsigned long long)n];
      printf("{{\"type\":\"action\",\"id\":%ld,\"action\":\"%s\"}}\n", id, action);
      fflush(stdout);
    }} else if (strstr(line, "\"type\":\"end\"")) {{
      fprintf(stderr, "{name}: match over (seat %d)\n", seat);
    }}
  }}
  free(line);
  free(buf);
  return 0; /* the arena closed stdin: exit cleanly */
}}
