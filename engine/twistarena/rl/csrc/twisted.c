/* Twisted's tensor (tensors.TwistedEncoder) from a TwistedState.
 *
 * fields (native._twisted_fields): hands, row, pile, phase, turn, starter,
 * round, face_down, plus, minus, totals.
 * layout: hand, row, row_right, phase, to_act, starter, numbers, then for each
 * relative seat r: plus_pile_r, minus_pile_r, counts_r.
 * tables: (card -> deck place, card -> is a toad, the phases, the over phase,
 * the deck size, and the match's constants: rounds, extend distance, expert,
 * plus point, minus point, toad penalty).
 */
#include "native.h"

enum { F_HANDS, F_ROW, F_PILE, F_PHASE, F_TURN, F_STARTER, F_ROUND, F_FACE_DOWN, F_PLUS,
       F_MINUS, F_TOTALS, F_COUNT };
enum { HAND, ROW, RIGHT, PHASE, TO_ACT, STARTER, NUMBERS, SEATS };
enum { T_INDEX, T_IS_TOAD, T_PHASES, T_OVER, T_DECK, T_ROUNDS, T_DISTANCE, T_EXPERT,
       T_PLUS_POINT, T_MINUS_POINT, T_TOAD_PENALTY };

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
        const long *block = src->lay + SEATS + 3 * rel(src, s);
        PyObject *p = seq_at(plus, s), *m = seq_at(minus, s);
        PyObject *hand = seq_at(hands, s), *down = seq_at(face_down, s);
        PyObject *total = seq_at(totals, s);
        if (!p || !m || !hand || !down || !total) return -1;
        if (flags(t, block[0], p, index) < 0 || flags(t, block[1], m, index) < 0) return -1;
        long score = round_score(src, p, m, &failed);
        long total_v = failed ? 0 : as_long(total, &failed);
        Py_ssize_t hand_n = seq_len(hand), down_n = seq_len(down);
        if (failed || hand_n < 0 || down_n < 0) return -1;
        long counts = block[2];
        if (put(t, counts, (double)hand_n / 9) < 0 || put(t, counts + 1, (double)down_n) < 0 ||
            put(t, counts + 2, (double)score / 10) < 0 ||
            put(t, counts + 3, (double)total_v / 10) < 0)
            return -1;
    }
    return 0;
}

int write_twisted(Tensor *t, const Source *src) {
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
    int over = PyObject_RichCompareBool(phase, table(src, T_OVER), Py_EQ);
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
