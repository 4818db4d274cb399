/* A twistarena starter bot in C, standard library only, reading the bridge's
 * plain-text form:
 *   cc -O2 -o bot bot.c
 *   twistarena bot --exec ./bot --text --server ... --match ... --token ...
 * Each decision is a block of lines ending with "end"; the bot answers one action id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lower is better: twist or take a bonus first, then plain card plays,
 * keep Twhist cards for later, decline and take the Twisted row last. */
static int rank_of(const char *kind) {
    static const char *names[] = {"twist", "bonus", "play", "extend", "start", "pick",
                                  "reserve", "twhist", "decline", "stop", "take"};
    static const int ranks[] = {0, 0, 1, 1, 1, 1, 1, 3, 4, 4, 5};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
        if (strcmp(kind, names[i]) == 0) return ranks[i];
    return 2;
}

int main(void) {
    static char line[1 << 16];
    long best[3] = {0, 0, -1}; /* kind rank, card value, id */
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        char *word = strtok(line, " ");
        if (word == NULL) continue;
        if (strcmp(word, "decision") == 0) {
            best[2] = -1;
        } else if (strcmp(word, "action") == 0) {
            long mine[3] = {2, 0, atol(strtok(NULL, " "))};
            while ((word = strtok(NULL, " ")) != NULL && strcmp(word, "|") != 0) {
                char *value = strchr(word, '=');
                if (value == NULL) continue;
                *value++ = '\0';
                if (strcmp(word, "kind") == 0) mine[0] = rank_of(value);
                if (strcmp(word, "card") == 0 || strcmp(word, "card.value") == 0) mine[1] = atol(value);
            }
            if (best[2] < 0 || mine[0] < best[0] || (mine[0] == best[0] &&
                (mine[1] < best[1] || (mine[1] == best[1] && mine[2] < best[2]))))
                memcpy(best, mine, sizeof best);
        } else if (strcmp(word, "end") == 0) {
            printf("%ld\n", best[2]);
            fflush(stdout);
        } else if (strcmp(word, "over") == 0) {
            fprintf(stderr, "match over\n");
            return 0;
        }
    }
    return 0;
}
