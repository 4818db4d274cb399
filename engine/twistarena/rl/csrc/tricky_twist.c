/* Tricky Twist's tensor (tensors.TrickyTwistEncoder) from a TrickyTwistState.
 *
 * What it reads, by name, is TRICKY_TWIST below (as in twisted.c). Its tables:
 * card -> card (the deck's ids: bounds the card flags), card -> family, the
 * phases, phase -> decision kind (-1: the state's _decision() tells, in the end
 * bonus and at the end), the reserve phase's place, the decision kinds, the
 * bonus names, bonus -> bonus (the bonus ids: bounds the bonus flags), scoring
 * card -> place (a dict), variable face -> face kind (a dict), the variable
 * bonus cards, the number of face kinds, and the match's rounds.
 */
#include "native.h"

enum { HAND, RESERVE, TRICK, LED, PHASE, KIND, DECIDER, BONUS, QUEUES, TO_ACT, FIRST, LEADER,
       SCORING, PAST, SUPPLY, OUT, FACES, NUMBERS, PLAYERS };
/* a player's block of PLAYERS, one per relative seat */
enum { P_KNOWN, P_TRICKS, P_FALSE, P_BONUSES, P_VOID, P_VALUES, P_FAMILIES, P_COUNTS, P_SIZE };
enum { T_CARD, T_FAMILY, T_PHASES, T_PHASE_KIND, T_RESERVE, T_KINDS, T_BONUS_NAMES, T_BONUS,
       T_SCORING, T_FACE, T_VARIABLE, T_FACE_KINDS, T_ROUNDS, T_COUNT };
enum { F_HANDS, F_RESERVES, F_HELD, F_TRICK, F_LEADER, F_PHASE, F_ACTING, F_PICKS, F_WINDOW,
       F_FIRST, F_SCORING_CARD, F_SCORING_DECK, F_SUPPLY, F_OUT, F_FACES, F_END_CHOICES,
       F_ROUND_NO, F_SUB, F_KNOWN, F_TRICKS, F_FALSE, F_VOIDS, F_TOTAL, F_LAST_ROUND, F_COUNT };

static const char *const FIELDS[F_COUNT] = {
    [F_HANDS] = "hands", [F_RESERVES] = "reserves", [F_HELD] = "held", [F_TRICK] = "trick",
    [F_LEADER] = "leader", [F_PHASE] = "phase", [F_ACTING] = "acting", [F_PICKS] = "picks",
    [F_WINDOW] = "window", [F_FIRST] = "first_player", [F_SCORING_CARD] = "scoring_card",
    [F_SCORING_DECK] = "scoring_deck", [F_SUPPLY] = "supply", [F_OUT] = "out",
    [F_FACES] = "faces", [F_END_CHOICES] = "end_choices", [F_ROUND_NO] = "round_no",
    [F_SUB] = "sub", [F_KNOWN] = "known", [F_TRICKS] = "tricks", [F_FALSE] = "false",
    [F_VOIDS] = "voids", [F_TOTAL] = "total", [F_LAST_ROUND] = "last_round"};
static const Segment SEGMENTS[PLAYERS] = {
    [HAND] = {"hand", 0}, [RESERVE] = {"reserve", 0}, [TRICK] = {"trick", 0},
    [LED] = {"led_family", 0}, [PHASE] = {"phase", 0}, [KIND] = {"decision_kind", 0},
    [DECIDER] = {"decision_seat", 0}, [BONUS] = {"decision_bonus", 0},
    [QUEUES] = {"queues", 0}, [TO_ACT] = {"to_act", 0}, [FIRST] = {"first_player", 0},
    [LEADER] = {"leader", 0}, [SCORING] = {"scoring_card", 0},
    [PAST] = {"past_scoring_cards", 0}, [SUPPLY] = {"supply", 0}, [OUT] = {"bonus_out", 0},
    [FACES] = {"faces", 0}, [NUMBERS] = {"numbers", 5}};
static const Segment SEAT_SEGMENTS[P_SIZE] = {
    [P_KNOWN] = {"known_in_hand", 0}, [P_TRICKS] = {"tricks", 0},
    [P_FALSE] = {"false_tricks", 0}, [P_BONUSES] = {"bonuses", 0}, [P_VOID] = {"void", 0},
    [P_VALUES] = {"false_values", 12}, [P_FAMILIES] = {"false_families", 4},
    [P_COUNTS] = {"counts", 8}};
static const TableSpec TABLES[T_COUNT] = {
    [T_CARD] = {"card_place", TABLE_INTS}, [T_FAMILY] = {"family", TABLE_INTS},
    [T_PHASES] = {"phases", TABLE_TUPLE}, [T_PHASE_KIND] = {"phase_kind", TABLE_INTS},
    [T_RESERVE] = {"reserve_phase", TABLE_INT}, [T_KINDS] = {"kinds", TABLE_TUPLE},
    [T_BONUS_NAMES] = {"bonus_names", TABLE_TUPLE}, [T_BONUS] = {"bonus_place", TABLE_INTS},
    [T_SCORING] = {"scoring_place", TABLE_DICT}, [T_FACE] = {"face_kind", TABLE_DICT},
    [T_VARIABLE] = {"variable", TABLE_INTS}, [T_FACE_KINDS] = {"face_kinds", TABLE_INT},
    [T_ROUNDS] = {"rounds", TABLE_INT}};

/* index[key] (a dict of ints) (sets *failed, with ValueError, for a key not in it). */
static long place(PyObject *index, PyObject *key, int *failed) {
    if (index == NULL || key == NULL || !PyDict_Check(index)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a table is not a dict");
        *failed = 1;
        return -1;
    }
    /* the key is held while its hash and == run (they may be Python code) */
    Py_INCREF(key);
    PyObject *v = PyDict_GetItemWithError(index, key);
    if (v == NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%R is not in the encoder's table", key);
    Py_DECREF(key);
    return as_long(v, failed);
}

/* Flags at base + the relative seat of each int of seq. */
static int seat_flags(Tensor *t, const Source *src, long base, PyObject *seq) {
    Py_ssize_t count = seq_len(seq);
    if (count < 0) return -1;
    int failed = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        long s = as_long(seq_item(seq, i), &failed);
        if (failed || put(t, base + rel(src, s), 1.0) < 0) return -1;
    }
    return 0;
}

/* The seat's hand and reserve, the trick (block per relative seat, from the
 * leader) and the led family. */
static int table_cards(Tensor *t, const Source *src) {
    const long *lay = src->lay;
    const Ints *card = &src->ints[T_CARD];
    int failed = 0;
    PyObject *trick = field(src, F_TRICK);
    PyObject *hand = seq_at(field(src, F_HANDS), src->me);
    PyObject *reserve = seq_at(field(src, F_RESERVES), src->me);
    if (!hand || !reserve) return -1;
    if (flags(t, lay[HAND], hand, card) < 0 || flags(t, lay[RESERVE], reserve, card) < 0)
        return -1;
    long leader = field_long(src, F_LEADER, &failed);
    Py_ssize_t plays = seq_len(trick);
    if (failed || plays < 0) return -1;
    for (Py_ssize_t i = 0; i < plays; i++) {
        long c = as_long(seq_item(trick, i), &failed);
        c = failed ? -1 : at(card, c, &failed);
        if (failed) return -1;
        if (put(t, lay[TRICK] + rel(src, leader + i) * card->len + c, 1.0) < 0) return -1;
        if (i == 0) {
            long family = at(&src->ints[T_FAMILY], c, &failed);
            if (failed || put(t, lay[LED] + family, 1.0) < 0) return -1;
        }
    }
    return 0;
}

/* The decision's kind, seat and bonus as the state's _decision() gives them (the
 * end bonus and the end: rare, and worked out from the end steps). */
static int asked_decision(Tensor *t, const Source *src, long *decider) {
    const long *lay = src->lay;
    int failed = 0, rc = -1;
    PyObject *decision = PyObject_CallMethodNoArgs(src->state, NAME__decision);
    if (!decision) return -1;
    if (!PyDict_Check(decision)) {
        PyErr_SetString(PyExc_TypeError, "_decision() is not a dict");
        goto done;
    }
    PyObject *kind = PyDict_GetItemWithError(decision, NAME_kind);
    PyObject *seat = kind ? PyDict_GetItemWithError(decision, NAME_seat) : NULL;
    PyObject *bonus = seat ? PyDict_GetItemWithError(decision, NAME_bonus) : NULL;
    if (!bonus) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "_decision() lacks a key");
        goto done;
    }
    long k = position(table(src, T_KINDS), kind);
    if (k < 0 || put(t, lay[KIND] + k, 1.0) < 0) goto done;
    *decider = as_long(seat, &failed);
    if (failed) goto done;
    int named = PyObject_IsTrue(bonus);
    if (named < 0) goto done;
    if (named) {
        long b = position(table(src, T_BONUS_NAMES), bonus);
        if (b < 0 || put(t, lay[BONUS] + b, 1.0) < 0) goto done;
    }
    rc = 0;
done:
    Py_DECREF(decision);
    return rc;
}

/* The phase, the decision and the seats' roles (queues, to act, first, leader). */
static int roles(Tensor *t, const Source *src) {
    const long *lay = src->lay;
    int failed = 0;
    PyObject *phase = field(src, F_PHASE), *acting = field(src, F_ACTING);
    long ph = position(table(src, T_PHASES), phase);
    if (ph < 0 || put(t, lay[PHASE] + ph, 1.0) < 0) return -1;
    long kind = at(&src->ints[T_PHASE_KIND], ph, &failed);
    long reserve = as_long(table(src, T_RESERVE), &failed);
    Py_ssize_t acting_n = seq_len(acting);
    if (failed || acting_n < 0) return -1;
    long decider = -1;
    if (kind < 0) {
        if (asked_decision(t, src, &decider) < 0) return -1;
    } else {
        if (put(t, lay[KIND] + kind, 1.0) < 0) return -1;
        if (acting_n > 0 && ph != reserve) {
            decider = as_long(seq_item(acting, 0), &failed);
            if (failed) return -1;
        }
    }
    if (decider >= 0 && put(t, lay[DECIDER] + rel(src, decider), 1.0) < 0) return -1;
    if (seat_flags(t, src, lay[QUEUES], field(src, F_PICKS)) < 0 ||
        seat_flags(t, src, lay[QUEUES] + src->n, field(src, F_WINDOW)) < 0 ||
        seat_flags(t, src, lay[TO_ACT], acting) < 0)
        return -1;
    long first = field_long(src, F_FIRST, &failed);
    long leader = field_long(src, F_LEADER, &failed);
    if (failed) return -1;
    if (put(t, lay[FIRST] + rel(src, first), 1.0) < 0 ||
        put(t, lay[LEADER] + rel(src, leader), 1.0) < 0)
        return -1;
    return 0;
}

/* Bonus ids of seq as bits of *shown (each bounded by the bonus table). */
static int bonus_bits(const Source *src, PyObject *seq, unsigned long *shown) {
    Py_ssize_t count = seq_len(seq);
    if (count < 0) return -1;
    int failed = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        long b = as_long(seq_item(seq, i), &failed);
        if (failed) return -1;
        b = at(&src->ints[T_BONUS], b, &failed);
        if (failed) return -1;
        if (b >= (long)(8 * sizeof *shown)) {
            PyErr_Format(PyExc_IndexError, "bonus %ld out of a bitmask", b);
            return -1;
        }
        *shown |= 1UL << b;
    }
    return 0;
}

/* The scoring cards, the bonus cards (supply, out, the faces of the variable ones
 * in sight) and the numbers. */
static int round_zones(Tensor *t, const Source *src) {
    const long *lay = src->lay;
    const Ints *bonus = &src->ints[T_BONUS], *variable = &src->ints[T_VARIABLE];
    PyObject *scoring = table(src, T_SCORING);
    int failed = 0;
    PyObject *deck = field(src, F_SCORING_DECK), *supply = field(src, F_SUPPLY);
    PyObject *faces = field(src, F_FACES), *held = field(src, F_HELD);
    long at_card = place(scoring, field(src, F_SCORING_CARD), &failed);
    if (failed || put(t, lay[SCORING] + at_card, 1.0) < 0) return -1;
    long round_no = field_long(src, F_ROUND_NO, &failed);
    long sub = field_long(src, F_SUB, &failed);
    long rounds = as_long(table(src, T_ROUNDS), &failed);
    long face_kinds = as_long(table(src, T_FACE_KINDS), &failed);
    Py_ssize_t deck_n = seq_len(deck), choices_n = seq_len(field(src, F_END_CHOICES));
    if (failed || deck_n < 0 || choices_n < 0) return -1;
    for (long i = 0; i < round_no; i++) {  /* earlier rounds' cards: the deck's first */
        PyObject *past = seq_at(deck, i);
        if (!past) return -1;
        long at_past = place(scoring, past, &failed);
        if (failed || put(t, lay[PAST] + at_past, 1.0) < 0) return -1;
    }
    if (flags(t, lay[SUPPLY], supply, bonus) < 0 ||
        flags(t, lay[OUT], field(src, F_OUT), bonus) < 0)
        return -1;
    unsigned long shown = 0;  /* bonus cards in the supply or held: their faces show */
    if (bonus_bits(src, supply, &shown) < 0) return -1;
    for (long s = 0; s < src->n; s++) {
        PyObject *mine = seq_at(held, s);
        if (!mine || bonus_bits(src, mine, &shown) < 0) return -1;
    }
    for (Py_ssize_t v = 0; v < variable->len; v++) {
        long b = variable->v[v];
        if (b < 0 || b >= (long)(8 * sizeof shown) || !(shown >> b & 1)) continue;
        PyObject *face = seq_at(faces, b);
        if (!face) return -1;
        long kind = place(table(src, T_FACE), face, &failed);
        if (failed || put(t, lay[FACES] + v * face_kinds + kind, 1.0) < 0) return -1;
    }
    long numbers = lay[NUMBERS];
    if (put(t, numbers, (double)(round_no + 1) / rounds) < 0 ||
        put(t, numbers + 1, (double)(deck_n - round_no - 1) / 9) < 0 ||
        put(t, numbers + 2, (double)(sub + 1) / 16) < 0 ||
        put(t, numbers + 3, (double)choices_n / 8) < 0 ||
        put(t, numbers + 4, (double)rounds / 4) < 0)
        return -1;
    return 0;
}

/* Each seat's total of the last round scored (0: none) into last[0..n), as a
 * dict of the rows by seat would give it (a later row of a seat wins). */
static int last_totals(const Source *src, long *last) {
    PyObject *rows = field(src, F_LAST_ROUND);
    Py_ssize_t count = seq_len(rows);
    if (count < 0) return -1;
    int failed = 0;
    for (long s = 0; s < src->n; s++) last[s] = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *row = seq_item(rows, i);
        if (!PyDict_Check(row)) {
            PyErr_SetString(PyExc_TypeError, "a last_round row is not a dict");
            return -1;
        }
        PyObject *seat = PyDict_GetItemWithError(row, NAME_seat);
        PyObject *total = seat ? PyDict_GetItemWithError(row, NAME_round_total) : NULL;
        if (!total) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "a last_round row lacks a key");
            return -1;
        }
        long s = as_long(seat, &failed);
        long v = failed ? 0 : as_long(total, &failed);
        if (failed) return -1;
        if (0 <= s && s < src->n) last[s] = v;
    }
    return 0;
}

/* A player's tricks: their cards as flags; *blank: how many are blank (no cards). */
static int tricks_of(Tensor *t, const Source *src, long base, PyObject *tricks, long *blank) {
    Py_ssize_t count = seq_len(tricks);
    if (count < 0) return -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *trick = seq_item(tricks, i);
        Py_ssize_t cards = seq_len(trick);
        if (cards < 0 || flags(t, base, trick, &src->ints[T_CARD]) < 0) return -1;
        *blank += cards == 0;
    }
    return 0;
}

/* A player's false tricks (family or -1, value or -1, cards, source, modifier):
 * their cards as flags, counts by value and by family (added one by one, as the
 * dict path does), *modifiers: the sum of their modifiers. */
static int false_of(Tensor *t, const Source *src, const long *block, PyObject *false_,
                    long *modifiers) {
    Py_ssize_t count = seq_len(false_);
    if (count < 0) return -1;
    int failed = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *f = seq_item(false_, i);
        PyObject *family = seq_at(f, 0), *value = family ? seq_at(f, 1) : NULL;
        PyObject *cards = value ? seq_at(f, 2) : NULL, *modifier = cards ? seq_at(f, 4) : NULL;
        if (!modifier) return -1;
        if (flags(t, block[P_FALSE], cards, &src->ints[T_CARD]) < 0) return -1;
        long v = as_long(value, &failed), fam = as_long(family, &failed);
        long d = as_long(modifier, &failed);
        if (failed) return -1;
        if (1 <= v && v <= 12 && add(t, block[P_VALUES] + v - 1, 1.0) < 0) return -1;
        if (fam >= 0) {
            if (fam >= 4) {
                PyErr_Format(PyExc_IndexError, "family %ld of a false trick", fam);
                return -1;
            }
            if (add(t, block[P_FAMILIES] + fam, 1.0) < 0) return -1;
        }
        *modifiers += d;
    }
    return 0;
}

/* Each player's block: known cards, tricks, false tricks, bonus cards, voids and counts. */
static int players(Tensor *t, const Source *src) {
    int failed = 0;
    PyObject *hands = field(src, F_HANDS), *reserves = field(src, F_RESERVES);
    PyObject *held = field(src, F_HELD), *known = field(src, F_KNOWN);
    PyObject *tricks = field(src, F_TRICKS), *false_ = field(src, F_FALSE);
    PyObject *voids = field(src, F_VOIDS), *totals = field(src, F_TOTAL);
    long last[8];
    if (last_totals(src, last) < 0) return -1;
    for (long s = 0; s < src->n; s++) {
        const long *block = src->lay + PLAYERS + P_SIZE * rel(src, s);
        PyObject *hand = seq_at(hands, s), *reserve = seq_at(reserves, s);
        PyObject *k = seq_at(known, s), *tr = seq_at(tricks, s), *f = seq_at(false_, s);
        PyObject *mine = seq_at(held, s), *void_ = seq_at(voids, s), *total = seq_at(totals, s);
        if (!hand || !reserve || !k || !tr || !f || !mine || !void_ || !total) return -1;
        if (flags(t, block[P_KNOWN], k, &src->ints[T_CARD]) < 0) return -1;
        long blank = 0, modifiers = 0;
        if (tricks_of(t, src, block[P_TRICKS], tr, &blank) < 0) return -1;
        if (false_of(t, src, block, f, &modifiers) < 0) return -1;
        if (flags(t, block[P_BONUSES], mine, &src->ints[T_BONUS]) < 0) return -1;
        if (bit_flags(t, block[P_VOID], void_, NULL) < 0) return -1;
        Py_ssize_t hand_n = seq_len(hand), reserve_n = seq_len(reserve);
        Py_ssize_t tricks_n = seq_len(tr), false_n = seq_len(f);
        long score = as_long(total, &failed);
        if (failed || hand_n < 0 || reserve_n < 0 || tricks_n < 0 || false_n < 0) return -1;
        long counts = block[P_COUNTS];
        if (put(t, counts, (double)hand_n / 16) < 0 ||
            put(t, counts + 1, (double)reserve_n / 5) < 0 ||
            put(t, counts + 2, (double)tricks_n / 16) < 0 ||
            put(t, counts + 3, (double)blank) < 0 ||
            put(t, counts + 4, (double)false_n / 16) < 0 ||
            put(t, counts + 5, (double)modifiers) < 0 ||
            put(t, counts + 6, (double)score / 50) < 0 ||
            put(t, counts + 7, (double)last[s] / 50) < 0)
            return -1;
    }
    return 0;
}

static int write_tricky_twist(Tensor *t, const Source *src) {
    if (fields_are(src, F_COUNT) < 0) return -1;
    if (src->n > 8) {
        PyErr_SetString(PyExc_ValueError, "at most 8 players");
        return -1;
    }
    if (table_cards(t, src) < 0 || roles(t, src) < 0 || round_zones(t, src) < 0 ||
        players(t, src) < 0)
        return -1;
    return 0;
}

const Game TRICKY_TWIST = {"tricky_twist", write_tricky_twist, FIELDS, F_COUNT, SEGMENTS, PLAYERS,
                           SEAT_SEGMENTS, P_SIZE, TABLES, T_COUNT};
