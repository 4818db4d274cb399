/* Twhist's tensor (tensors.TwhistEncoder) from a TwhistState.
 *
 * What it reads, by name, is TWHIST below (as in twisted.c). Its tables: state
 * colour -> encoder colour, Twhist kind -> encoder Twhist card, state phase ->
 * encoder phase, FLIP bit -> star_side place, the play and pick phases, the
 * first Twhist action id, the number cards, and the match's constants (its
 * tricks, whether Twhist cards lie open).
 */
#include "native.h"

enum {
    HAND, TWHIST_HAND, TRICK, LEAD, PICKED, POOL, OPEN, DISCARD, PHASE, TO_ACT, ROLES,
    NUMBERS, PLAYERS
};
/* a player's block of PLAYERS, one per relative seat */
enum { P_TWHIST, P_STAR, P_VOID, P_COUNTS, P_SIZE };
enum { F_HANDS, F_TWHIST, F_TRICK, F_PICKED, F_POOL, F_OPEN, F_DISCARD, F_LEADER, F_LEAD,
       F_PHASE, F_TURN, F_PICKER, F_DEALER, F_NEXT_LEADER, F_DONE, F_FLIPS, F_VOIDS, F_STARS,
       F_COUNT };
enum { T_COLOUR, T_TWHIST, T_PHASE, T_STAR, T_PLAY, T_PICK, T_BASE, T_K, T_TOTAL, T_VISIBLE,
       T_COUNT };

static const char *const FIELDS[F_COUNT] = {
    [F_HANDS] = "hands", [F_TWHIST] = "twhist", [F_TRICK] = "trick", [F_PICKED] = "picked",
    [F_POOL] = "pool", [F_OPEN] = "open_cards", [F_DISCARD] = "discard",
    [F_LEADER] = "leader", [F_LEAD] = "lead_colour", [F_PHASE] = "phase", [F_TURN] = "turn",
    [F_PICKER] = "picker", [F_DEALER] = "dealer", [F_NEXT_LEADER] = "next_leader",
    [F_DONE] = "tricks_done", [F_FLIPS] = "flips", [F_VOIDS] = "voids", [F_STARS] = "stars"};
static const Segment SEGMENTS[PLAYERS] = {
    [HAND] = {"hand", 0}, [TWHIST_HAND] = {"twhist_hand", 4}, [TRICK] = {"trick", 0},
    [LEAD] = {"lead_colour", 0}, [PICKED] = {"picked", 0}, [POOL] = {"pool", 0},
    [OPEN] = {"open_cards", 0}, [DISCARD] = {"discard", 0}, [PHASE] = {"phase", 3},
    [TO_ACT] = {"to_act", 0}, [ROLES] = {"roles", 0}, [NUMBERS] = {"numbers", 2}};
static const Segment SEAT_SEGMENTS[P_SIZE] = {
    [P_TWHIST] = {"twhist", 4}, [P_STAR] = {"star_side", 0}, [P_VOID] = {"void", 0},
    [P_COUNTS] = {"counts", 4}};
static const TableSpec TABLES[T_COUNT] = {
    [T_COLOUR] = {"colour_place", TABLE_INTS}, [T_TWHIST] = {"twhist_place", TABLE_INTS},
    [T_PHASE] = {"phase_place", TABLE_INTS}, [T_STAR] = {"star_place", TABLE_INTS},
    [T_PLAY] = {"play", TABLE_INT}, [T_PICK] = {"pick", TABLE_INT},
    [T_BASE] = {"twhist_base", TABLE_INT}, [T_K] = {"deck_size", TABLE_INT},
    [T_TOTAL] = {"tricks_total", TABLE_INT}, [T_VISIBLE] = {"twhist_visible", TABLE_ANY}};

/* The trick's plays, seat by seat from the leader: a number card at its id in
 * its player's block, a Twhist card after the number cards. */
static int trick_flags(Tensor *t, const Source *src, PyObject *trick, long leader) {
    int failed = 0;
    long base = as_long(table(src, T_BASE), &failed);
    long k = as_long(table(src, T_K), &failed);
    if (failed) return -1;
    Py_ssize_t len = seq_len(trick);
    if (len < 0) return -1;
    long seat = leader;
    for (Py_ssize_t i = 0; i < len; i++) {
        long a = as_long(seq_item(trick, i), &failed);
        if (failed) return -1;
        long block = src->lay[TRICK] + rel(src, seat) * (k + 4);
        long place = a;
        if (a >= base) {
            place = k + at(&src->ints[T_TWHIST], a - base, &failed);
            if (failed) return -1;
        }
        if (put(t, block + place, 1.0) < 0) return -1;
        seat = (seat + 1) % src->n;
    }
    return 0;
}

/* Each player's Twhist cards (when they lie open, or the observer's), FLIP cards
 * star side up, voids and counts. */
static int player_blocks(Tensor *t, const Source *src) {
    int failed = 0;
    PyObject *hands = field(src, F_HANDS), *twhist = field(src, F_TWHIST);
    PyObject *flips = field(src, F_FLIPS), *voids = field(src, F_VOIDS);
    PyObject *stars = field(src, F_STARS);
    PyObject *open_ = table(src, T_VISIBLE);
    int visible = open_ ? PyObject_IsTrue(open_) : -1;
    if (visible < 0) return -1;
    for (long s = 0; s < src->n; s++) {
        const long *block = src->lay + PLAYERS + P_SIZE * rel(src, s);
        PyObject *hand = seq_at(hands, s), *tw = seq_at(twhist, s), *fl = seq_at(flips, s);
        PyObject *vo = seq_at(voids, s), *st = seq_at(stars, s);
        if (!hand || !tw || !fl || !vo || !st) return -1;
        if ((visible || s == src->me) &&
            bit_flags(t, block[P_TWHIST], tw, &src->ints[T_TWHIST]) < 0)
            return -1;
        if (bit_flags(t, block[P_STAR], fl, &src->ints[T_STAR]) < 0) return -1;
        if (bit_flags(t, block[P_VOID], vo, &src->ints[T_COLOUR]) < 0) return -1;
        Py_ssize_t hand_n = seq_len(hand);
        int tw_n = bit_count(tw, &failed);
        int fl_n = bit_count(fl, &failed);
        long st_v = as_long(st, &failed);
        if (failed || hand_n < 0) return -1;
        long counts = block[P_COUNTS];
        if (put(t, counts, (double)hand_n / 10) < 0 || put(t, counts + 1, (double)tw_n / 4) < 0 ||
            put(t, counts + 2, (double)st_v / 10) < 0 ||
            put(t, counts + 3, (double)fl_n / 10) < 0)
            return -1;
    }
    return 0;
}

static int write_twhist(Tensor *t, const Source *src) {
    if (fields_are(src, F_COUNT) < 0) return -1;
    const long *lay = src->lay;
    int failed = 0;
    PyObject *hand = seq_at(field(src, F_HANDS), src->me);
    PyObject *mine = seq_at(field(src, F_TWHIST), src->me);
    if (!hand || !mine || flags(t, lay[HAND], hand, NULL) < 0) return -1;
    if (bit_flags(t, lay[TWHIST_HAND], mine, &src->ints[T_TWHIST]) < 0) return -1;
    long leader = field_long(src, F_LEADER, &failed);
    long lead = field_long(src, F_LEAD, &failed);
    long phase = field_long(src, F_PHASE, &failed);
    long turn = field_long(src, F_TURN, &failed);
    long picker = field_long(src, F_PICKER, &failed);
    long dealer = field_long(src, F_DEALER, &failed);
    long next_leader = field_long(src, F_NEXT_LEADER, &failed);
    long done_n = field_long(src, F_DONE, &failed);
    long total = as_long(table(src, T_TOTAL), &failed);
    long play = as_long(table(src, T_PLAY), &failed);
    long pick = as_long(table(src, T_PICK), &failed);
    if (failed) return -1;
    if (trick_flags(t, src, field(src, F_TRICK), leader) < 0) return -1;
    if (lead >= 0) {
        long c = at(&src->ints[T_COLOUR], lead, &failed);
        if (failed || put(t, lay[LEAD] + c, 1.0) < 0) return -1;
    }
    if (flags(t, lay[PICKED], field(src, F_PICKED), NULL) < 0 ||
        flags(t, lay[POOL], field(src, F_POOL), NULL) < 0 ||
        flags(t, lay[OPEN], field(src, F_OPEN), NULL) < 0 ||
        flags(t, lay[DISCARD], field(src, F_DISCARD), NULL) < 0)
        return -1;
    long ph = at(&src->ints[T_PHASE], phase, &failed);
    if (failed || put(t, lay[PHASE] + ph, 1.0) < 0) return -1;
    /* the player to act; the picker while picking; nobody at the end */
    if (phase == play && put(t, lay[TO_ACT] + rel(src, turn), 1.0) < 0) return -1;
    if (phase == pick && put(t, lay[TO_ACT] + rel(src, picker), 1.0) < 0) return -1;
    const long roles[4] = {dealer, leader, picker, next_leader};
    for (long i = 0; i < 4; i++) {
        if (roles[i] >= 0 && put(t, lay[ROLES] + i * src->n + rel(src, roles[i]), 1.0) < 0)
            return -1;
    }
    if (total == 0) {
        PyErr_SetString(PyExc_ZeroDivisionError, "no tricks in the match");
        return -1;
    }
    if (put(t, lay[NUMBERS], (double)done_n / total) < 0 ||
        put(t, lay[NUMBERS] + 1, (double)total / 14) < 0)
        return -1;
    return player_blocks(t, src);
}

const Game TWHIST = {"twhist", write_twhist, FIELDS, F_COUNT, SEGMENTS, PLAYERS, SEAT_SEGMENTS,
                     P_SIZE, TABLES, T_COUNT};
