/* Twisted's tensor (tensors.TwistedEncoder) from a TwistedState.
 *
 * What it reads, by name, is TWISTED below (the fields, in native's getter's
 * order; the segments, in the layout's order; the tables); native.py builds the
 * layout and the tables from those names, and tests/rl/test_native.py holds
 * the getter and the encoder's segments to them.
 */
#include "native.h"

enum { F_HANDS, F_ROW, F_PILE, F_PHASE, F_TURN, F_STARTER, F_ROUND, F_FACE_DOWN, F_PLUS,
       F_MINUS, F_TOTALS, F_COUNT };
enum { HAND, ROW, RIGHT, PHASE, TO_ACT, STARTER, NUMBERS, SEATS };
/* a seat's block of SEATS, one per relative seat */
enum { S_PLUS, S_MINUS, S_COUNTS, S_SIZE };
enum { T_INDEX, T_IS_TOAD, T_PHASES, T_OVER, T_DECK, T_ROUNDS, T_DISTANCE, T_EXPERT,
       T_PLUS_POINT, T_MINUS_POINT, T_TOAD_PENALTY, T_COUNT };

static const char *const FIELDS[F_COUNT] = {
    [F_HANDS] = "hands", [F_ROW] = "row", [F_PILE] = "pile", [F_PHASE] = "phase",
    [F_TURN] = "turn", [F_STARTER] = "starter", [F_ROUND] = "round",
    [F_FACE_DOWN] = "face_down", [F_PLUS] = "plus", [F_MINUS] = "minus",
    [F_TOTALS] = "totals"};
static const Segment SEGMENTS[SEATS] = {
    [HAND] = {"hand", 0}, [ROW] = {"row", 0}, [RIGHT] = {"row_right", 0},
    [PHASE] = {"phase", 3}, [TO_ACT] = {"to_act", 0}, [STARTER] = {"starter", 0},
    [NUMBERS] = {"numbers", 6}};
static const Segment SEAT_SEGMENTS[S_SIZE] = {
    [S_PLUS] = {"plus_pile", 0}, [S_MINUS] = {"minus_pile", 0}, [S_COUNTS] = {"counts", 4}};
static const TableSpec TABLES[T_COUNT] = {
    [T_INDEX] = {"card_place", TABLE_INTS}, [T_IS_TOAD] = {"is_toad", TABLE_INTS},
    [T_PHASES] = {"phases", TABLE_TUPLE}, [T_OVER] = {"over", TABLE_ANY},
    [T_DECK] = {"deck_size", TABLE_INT}, [T_ROUNDS] = {"rounds", TABLE_INT},
    [T_DISTANCE] = {"distance", TABLE_INT}, [T_EXPERT] = {"expert", TABLE_INT},
    [T_PLUS_POINT] = {"plus_point", TABLE_INT}, [T_MINUS_POINT] = {"minus_point", TABLE_INT},
    [T_TOAD_PENALTY] = {"toad_penalty", TABLE_INT}};

/* TW-4.3, as TwistedState._round_score: +plus point a plus card, -minus point a
 * minus card, -toad penalty a toad. */
static long round_score(const Source *src, PyObject *plus, PyObject *minus, int *failed) {
    const Ints *is_toad = &src->ints[T_IS_TOAD];
    long plus_point = as_long(table(src, T_PLUS_POINT), failed);
    long minus_point = as_long(table(src, T_MINUS_POINT), failed);
    long toad_penalty = as_long(table(src, T_TOAD_PENALTY), failed);
    Py_ssize_t np_ = seq_len(plus), nm = seq_len(minus);
    if (np_ < 0 || nm < 0) *failed = 1;
    if (*failed) return 0;
    long minus_sum = 0;
    for (Py_ssize_t i = 0; i < nm; i++) {
        long c = as_long(seq_item(minus, i), failed);
        long toad = *failed ? 0 : at(is_toad, c, failed);
        if (*failed) return 0;
        minus_sum += toad ? toad_penalty : minus_point;
    }
    return (long)np_ * plus_point - minus_sum;
}

/* Each seat's plus and open minus piles, hand count, face-down cards, round
 * score and total. */
static int seat_blocks(Tensor *t, const Source *src) {
    const Ints *index = &src->ints[T_INDEX];
    PyObject *hands = field(src, F_HANDS), *face_down = field(src, F_FACE_DOWN);
    PyObject *plus = field(src, F_PLUS), *minus = field(src, F_MINUS);
    PyObject *totals = field(src, F_TOTALS);
    int failed = 0;
    for (long s = 0; s < src->n; s++) {
        const long *block = src->lay + SEATS + S_SIZE * rel(src, s);
        PyObject *p = seq_at(plus, s), *m = seq_at(minus, s);
        PyObject *hand = seq_at(hands, s), *down = seq_at(face_down, s);
        PyObject *total = seq_at(totals, s);
        if (!p || !m || !hand || !down || !total) return -1;
        if (flags(t, block[S_PLUS], p, index) < 0 || flags(t, block[S_MINUS], m, index) < 0)
            return -1;
        long score = round_score(src, p, m, &failed);
        long total_v = failed ? 0 : as_long(total, &failed);
        Py_ssize_t hand_n = seq_len(hand), down_n = seq_len(down);
        if (failed || hand_n < 0 || down_n < 0) return -1;
        long counts = block[S_COUNTS];
        if (put(t, counts, (double)hand_n / 9) < 0 || put(t, counts + 1, (double)down_n) < 0 ||
            put(t, counts + 2, (double)score / 10) < 0 ||
            put(t, counts + 3, (double)total_v / 10) < 0)
            return -1;
    }
    return 0;
}

static int write_twisted(Tensor *t, const Source *src) {
    if (fields_are(src, F_COUNT) < 0) return -1;
    const long *lay = src->lay;
    const Ints *index = &src->ints[T_INDEX];
    int failed = 0;
    PyObject *row = field(src, F_ROW), *pile = field(src, F_PILE), *phase = field(src, F_PHASE);
    PyObject *hand = seq_at(field(src, F_HANDS), src->me);
    if (!hand || flags(t, lay[HAND], hand, index) < 0) return -1;
    if (flags(t, lay[ROW], row, index) < 0) return -1;
    Py_ssize_t row_len = seq_len(row), pile_len = seq_len(pile);
    if (row_len < 0 || pile_len < 0) return -1;
    if (row_len > 0) {
        long c = as_long(seq_item(row, row_len - 1), &failed);
        long place = failed ? -1 : at(index, c, &failed);
        if (failed || put(t, lay[RIGHT] + place, 1.0) < 0) return -1;
    }
    long ph = position(table(src, T_PHASES), phase);
    if (ph < 0 || put(t, lay[PHASE] + ph, 1.0) < 0) return -1;
    PyObject *over_phase = table(src, T_OVER);
    int over = over_phase ? PyObject_RichCompareBool(phase, over_phase, Py_EQ) : -1;
    if (over < 0) return -1;
    long turn = field_long(src, F_TURN, &failed);
    long starter = field_long(src, F_STARTER, &failed);
    long round = field_long(src, F_ROUND, &failed);
    long deck = as_long(table(src, T_DECK), &failed);
    long rounds = as_long(table(src, T_ROUNDS), &failed);
    long distance = as_long(table(src, T_DISTANCE), &failed);
    long expert = as_long(table(src, T_EXPERT), &failed);
    if (failed) return -1;
    if (!over && put(t, lay[TO_ACT] + rel(src, turn), 1.0) < 0) return -1;  /* none at the end */
    if (put(t, lay[STARTER] + rel(src, starter), 1.0) < 0) return -1;
    long numbers = lay[NUMBERS];
    if (put(t, numbers, (double)row_len / 10) < 0 ||
        put(t, numbers + 1, (double)pile_len / deck) < 0 ||
        put(t, numbers + 2, (double)round / rounds) < 0 ||
        put(t, numbers + 3, (double)rounds / 20) < 0 ||
        put(t, numbers + 4, (double)distance / 86) < 0 ||
        put(t, numbers + 5, expert ? 1.0 : 0.0) < 0)
        return -1;
    return seat_blocks(t, src);
}

const Game TWISTED = {"twisted", write_twisted, FIELDS, F_COUNT, SEGMENTS, SEATS,
                      SEAT_SEGMENTS, S_SIZE, TABLES, T_COUNT};
