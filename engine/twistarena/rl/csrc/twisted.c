/* Twisted's tensor (tensors.TwistedEncoder) from a TwistedState.
 *
 * layout: hand, row, row_right, phase, to_act, starter, numbers, then for each
 * relative seat r: plus_pile_r, minus_pile_r, counts_r.
 * tables: (card -> deck place, card -> is a toad, the phases, the over phase,
 * the deck size).
 */
#include "native.h"

enum { HAND, ROW, RIGHT, PHASE, TO_ACT, STARTER, NUMBERS, SEATS };
enum { T_INDEX, T_IS_TOAD, T_PHASES, T_OVER, T_DECK };

/* TW-4.3, as TwistedState._round_score: +plus_point a plus card, -minus_point a
 * minus card, -toad_penalty a toad. */
static long round_score(const Source *src, PyObject *plus, PyObject *minus, long plus_point,
                        long minus_point, long toad_penalty, int *failed) {
    const Ints *is_toad = &src->ints[T_IS_TOAD];
    Py_ssize_t np_ = seq_len(plus), nm = seq_len(minus);
    if (np_ < 0 || nm < 0) {
        *failed = 1;
        return 0;
    }
    long minus_sum = 0;
    for (Py_ssize_t i = 0; i < nm; i++) {
        long c = as_long(seq_item(minus, i), failed);
        if (*failed) return 0;
        long toad = at(is_toad, c, failed);
        if (*failed) return 0;
        minus_sum += toad ? toad_penalty : minus_point;
    }
    return (long)np_ * plus_point - minus_sum;
}

static int seat_blocks(Tensor *t, const Source *src, PyObject *hands) {
    int failed = 0, rc = -1;
    long plus_point = field_long(src, NAME_plus_point, &failed);
    long minus_point = field_long(src, NAME_minus_point, &failed);
    long toad_penalty = field_long(src, NAME_toad_penalty, &failed);
    if (failed) return -1;
    const Ints *index = &src->ints[T_INDEX];
    PyObject *face_down = field(src, NAME_face_down), *plus = field(src, NAME_plus);
    PyObject *minus = field(src, NAME_minus), *totals = field(src, NAME_totals);
    if (!face_down || !plus || !minus || !totals) goto done;
    for (long s = 0; s < src->n; s++) {
        const long *block = src->lay + SEATS + 3 * rel(src, s);
        PyObject *p = seq_at(plus, s), *m = seq_at(minus, s);
        PyObject *hand = seq_at(hands, s), *down = seq_at(face_down, s);
        PyObject *total = seq_at(totals, s);
        if (!p || !m || !hand || !down || !total) goto done;
        if (flags(t, block[0], p, index) < 0 || flags(t, block[1], m, index) < 0) goto done;
        long score = round_score(src, p, m, plus_point, minus_point, toad_penalty, &failed);
        long total_v = as_long(total, &failed);
        Py_ssize_t hand_n = seq_len(hand), down_n = seq_len(down);
        if (failed || hand_n < 0 || down_n < 0) goto done;
        long counts = block[2];
        if (put(t, counts, (double)hand_n / 9) < 0 || put(t, counts + 1, (double)down_n) < 0 ||
            put(t, counts + 2, (double)score / 10) < 0 ||
            put(t, counts + 3, (double)total_v / 10) < 0)
            goto done;
    }
    rc = 0;
done:
    Py_XDECREF(face_down);
    Py_XDECREF(plus);
    Py_XDECREF(minus);
    Py_XDECREF(totals);
    return rc;
}

int write_twisted(Tensor *t, const Source *src) {
    const long *lay = src->lay;
    const Ints *index = &src->ints[T_INDEX];
    int failed = 0, rc = -1;
    PyObject *hands = field(src, NAME_hands), *row = field(src, NAME_row);
    PyObject *pile = field(src, NAME_pile), *phase = field(src, NAME_phase);
    if (!hands || !row || !pile || !phase) goto done;
    PyObject *hand = seq_at(hands, src->me);
    if (!hand || flags(t, lay[HAND], hand, index) < 0) goto done;
    if (flags(t, lay[ROW], row, index) < 0) goto done;
    Py_ssize_t row_len = seq_len(row), pile_len = seq_len(pile);
    if (row_len < 0 || pile_len < 0) goto done;
    if (row_len > 0) {
        long c = as_long(seq_item(row, row_len - 1), &failed);
        long place = failed ? -1 : at(index, c, &failed);
        if (failed || put(t, lay[RIGHT] + place, 1.0) < 0) goto done;
    }
    long ph = position(table(src, T_PHASES), phase);
    if (ph < 0 || put(t, lay[PHASE] + ph, 1.0) < 0) goto done;
    int over = PyObject_RichCompareBool(phase, table(src, T_OVER), Py_EQ);
    if (over < 0) goto done;
    long turn = field_long(src, NAME_turn, &failed);
    long starter = field_long(src, NAME_starter, &failed);
    long round = field_long(src, NAME_round, &failed);
    long rounds = field_long(src, NAME_rounds, &failed);
    long distance = field_long(src, NAME_distance, &failed);
    long expert = field_long(src, NAME_expert, &failed);
    long deck = as_long(table(src, T_DECK), &failed);
    if (failed) goto done;
    if (!over && put(t, lay[TO_ACT] + rel(src, turn), 1.0) < 0) goto done;  /* nobody at the end */
    if (put(t, lay[STARTER] + rel(src, starter), 1.0) < 0) goto done;
    long numbers = lay[NUMBERS];
    if (put(t, numbers, (double)row_len / 10) < 0 ||
        put(t, numbers + 1, (double)pile_len / deck) < 0 ||
        put(t, numbers + 2, (double)round / rounds) < 0 ||
        put(t, numbers + 3, (double)rounds / 20) < 0 ||
        put(t, numbers + 4, (double)distance / 86) < 0 ||
        put(t, numbers + 5, expert ? 1.0 : 0.0) < 0)
        goto done;
    rc = seat_blocks(t, src, hands);
done:
    Py_XDECREF(hands);
    Py_XDECREF(row);
    Py_XDECREF(pile);
    Py_XDECREF(phase);
    return rc;
}
