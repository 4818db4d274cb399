from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Observation(_message.Message):
    __slots__ = ("tricky_twist", "twisted", "twhist")
    TRICKY_TWIST_FIELD_NUMBER: _ClassVar[int]
    TWISTED_FIELD_NUMBER: _ClassVar[int]
    TWHIST_FIELD_NUMBER: _ClassVar[int]
    tricky_twist: TrickyTwistObservation
    twisted: TwistedObservation
    twhist: TwhistObservation
    def __init__(self, tricky_twist: _Optional[_Union[TrickyTwistObservation, _Mapping]] = ..., twisted: _Optional[_Union[TwistedObservation, _Mapping]] = ..., twhist: _Optional[_Union[TwhistObservation, _Mapping]] = ...) -> None: ...

class PublicView(_message.Message):
    __slots__ = ("tricky_twist", "twisted", "twhist")
    TRICKY_TWIST_FIELD_NUMBER: _ClassVar[int]
    TWISTED_FIELD_NUMBER: _ClassVar[int]
    TWHIST_FIELD_NUMBER: _ClassVar[int]
    tricky_twist: TrickyTwistPublicView
    twisted: TwistedPublicView
    twhist: TwhistPublicView
    def __init__(self, tricky_twist: _Optional[_Union[TrickyTwistPublicView, _Mapping]] = ..., twisted: _Optional[_Union[TwistedPublicView, _Mapping]] = ..., twhist: _Optional[_Union[TwhistPublicView, _Mapping]] = ...) -> None: ...

class TrickyTwistCard(_message.Message):
    __slots__ = ("id", "family", "value")
    ID_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    id: int
    family: str
    value: int
    def __init__(self, id: _Optional[int] = ..., family: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...

class TrickyTwistBonus(_message.Message):
    __slots__ = ("bonus", "face")
    BONUS_FIELD_NUMBER: _ClassVar[int]
    FACE_FIELD_NUMBER: _ClassVar[int]
    bonus: str
    face: str
    def __init__(self, bonus: _Optional[str] = ..., face: _Optional[str] = ...) -> None: ...

class TrickyTwistPlayedCard(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: TrickyTwistCard
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[TrickyTwistCard, _Mapping]] = ...) -> None: ...

class TrickyTwistTrick(_message.Message):
    __slots__ = ("cards", "blank")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    BLANK_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    blank: bool
    def __init__(self, cards: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ..., blank: _Optional[bool] = ...) -> None: ...

class TrickyTwistFalseTrick(_message.Message):
    __slots__ = ("family", "value", "cards", "source", "modifier")
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    MODIFIER_FIELD_NUMBER: _ClassVar[int]
    family: str
    value: int
    cards: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    source: str
    modifier: int
    def __init__(self, family: _Optional[str] = ..., value: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ..., source: _Optional[str] = ..., modifier: _Optional[int] = ...) -> None: ...

class TrickyTwistPlayer(_message.Message):
    __slots__ = ("seat", "hand_count", "reserve_count", "known_in_hand", "tricks", "false_tricks", "bonuses", "score", "void")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_COUNT_FIELD_NUMBER: _ClassVar[int]
    RESERVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    KNOWN_IN_HAND_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    FALSE_TRICKS_FIELD_NUMBER: _ClassVar[int]
    BONUSES_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    VOID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_count: int
    reserve_count: int
    known_in_hand: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    tricks: _containers.RepeatedCompositeFieldContainer[TrickyTwistTrick]
    false_tricks: _containers.RepeatedCompositeFieldContainer[TrickyTwistFalseTrick]
    bonuses: _containers.RepeatedCompositeFieldContainer[TrickyTwistBonus]
    score: int
    void: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., hand_count: _Optional[int] = ..., reserve_count: _Optional[int] = ..., known_in_hand: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[TrickyTwistTrick, _Mapping]]] = ..., false_tricks: _Optional[_Iterable[_Union[TrickyTwistFalseTrick, _Mapping]]] = ..., bonuses: _Optional[_Iterable[_Union[TrickyTwistBonus, _Mapping]]] = ..., score: _Optional[int] = ..., void: _Optional[_Iterable[str]] = ...) -> None: ...

class TrickyTwistDecision(_message.Message):
    __slots__ = ("kind", "seat", "bonus", "face", "index", "pick_queue", "window_queue")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    FACE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PICK_QUEUE_FIELD_NUMBER: _ClassVar[int]
    WINDOW_QUEUE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    seat: int
    bonus: str
    face: str
    index: int
    pick_queue: _containers.RepeatedScalarFieldContainer[int]
    window_queue: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, kind: _Optional[str] = ..., seat: _Optional[int] = ..., bonus: _Optional[str] = ..., face: _Optional[str] = ..., index: _Optional[int] = ..., pick_queue: _Optional[_Iterable[int]] = ..., window_queue: _Optional[_Iterable[int]] = ...) -> None: ...

class TrickyTwistEndChoice(_message.Message):
    __slots__ = ("seat", "bonus", "face", "choice", "family", "value", "delta", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    FACE_FIELD_NUMBER: _ClassVar[int]
    CHOICE_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bonus: str
    face: str
    choice: str
    family: str
    value: int
    delta: int
    cards: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    def __init__(self, seat: _Optional[int] = ..., bonus: _Optional[str] = ..., face: _Optional[str] = ..., choice: _Optional[str] = ..., family: _Optional[str] = ..., value: _Optional[int] = ..., delta: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ...) -> None: ...

class TrickyTwistRoundRow(_message.Message):
    __slots__ = ("seat", "tricks", "false_tricks", "base", "plus", "card", "round_total", "total")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    FALSE_TRICKS_FIELD_NUMBER: _ClassVar[int]
    BASE_FIELD_NUMBER: _ClassVar[int]
    PLUS_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    ROUND_TOTAL_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    tricks: int
    false_tricks: int
    base: int
    plus: int
    card: int
    round_total: int
    total: int
    def __init__(self, seat: _Optional[int] = ..., tricks: _Optional[int] = ..., false_tricks: _Optional[int] = ..., base: _Optional[int] = ..., plus: _Optional[int] = ..., card: _Optional[int] = ..., round_total: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class TrickyTwistObservation(_message.Message):
    __slots__ = ("game", "seat", "num_players", "phase", "to_act", "round", "rounds", "first_player", "leader", "scoring_card", "scoring_cards_left", "scores", "hand", "reserve", "trick", "led_family", "supply", "bonus_out", "players", "decision", "end_choices", "last_round", "past_scoring_cards")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    FIRST_PLAYER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    SCORING_CARD_FIELD_NUMBER: _ClassVar[int]
    SCORING_CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    RESERVE_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    LED_FAMILY_FIELD_NUMBER: _ClassVar[int]
    SUPPLY_FIELD_NUMBER: _ClassVar[int]
    BONUS_OUT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    END_CHOICES_FIELD_NUMBER: _ClassVar[int]
    LAST_ROUND_FIELD_NUMBER: _ClassVar[int]
    PAST_SCORING_CARDS_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    num_players: int
    phase: str
    to_act: _containers.RepeatedScalarFieldContainer[int]
    round: int
    rounds: int
    first_player: int
    leader: int
    scoring_card: str
    scoring_cards_left: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    hand: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    reserve: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    trick: _containers.RepeatedCompositeFieldContainer[TrickyTwistPlayedCard]
    led_family: str
    supply: _containers.RepeatedCompositeFieldContainer[TrickyTwistBonus]
    bonus_out: _containers.RepeatedScalarFieldContainer[str]
    players: _containers.RepeatedCompositeFieldContainer[TrickyTwistPlayer]
    decision: TrickyTwistDecision
    end_choices: _containers.RepeatedCompositeFieldContainer[TrickyTwistEndChoice]
    last_round: _containers.RepeatedCompositeFieldContainer[TrickyTwistRoundRow]
    past_scoring_cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., num_players: _Optional[int] = ..., phase: _Optional[str] = ..., to_act: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., first_player: _Optional[int] = ..., leader: _Optional[int] = ..., scoring_card: _Optional[str] = ..., scoring_cards_left: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., hand: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ..., reserve: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ..., trick: _Optional[_Iterable[_Union[TrickyTwistPlayedCard, _Mapping]]] = ..., led_family: _Optional[str] = ..., supply: _Optional[_Iterable[_Union[TrickyTwistBonus, _Mapping]]] = ..., bonus_out: _Optional[_Iterable[str]] = ..., players: _Optional[_Iterable[_Union[TrickyTwistPlayer, _Mapping]]] = ..., decision: _Optional[_Union[TrickyTwistDecision, _Mapping]] = ..., end_choices: _Optional[_Iterable[_Union[TrickyTwistEndChoice, _Mapping]]] = ..., last_round: _Optional[_Iterable[_Union[TrickyTwistRoundRow, _Mapping]]] = ..., past_scoring_cards: _Optional[_Iterable[str]] = ...) -> None: ...

class TrickyTwistPublicView(_message.Message):
    __slots__ = ("game", "seat", "num_players", "phase", "to_act", "round", "rounds", "first_player", "leader", "scoring_card", "scoring_cards_left", "scores", "hand", "reserve", "trick", "led_family", "supply", "bonus_out", "players", "decision", "end_choices", "last_round", "past_scoring_cards")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    FIRST_PLAYER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    SCORING_CARD_FIELD_NUMBER: _ClassVar[int]
    SCORING_CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    RESERVE_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    LED_FAMILY_FIELD_NUMBER: _ClassVar[int]
    SUPPLY_FIELD_NUMBER: _ClassVar[int]
    BONUS_OUT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    END_CHOICES_FIELD_NUMBER: _ClassVar[int]
    LAST_ROUND_FIELD_NUMBER: _ClassVar[int]
    PAST_SCORING_CARDS_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    num_players: int
    phase: str
    to_act: _containers.RepeatedScalarFieldContainer[int]
    round: int
    rounds: int
    first_player: int
    leader: int
    scoring_card: str
    scoring_cards_left: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    hand: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    reserve: _containers.RepeatedCompositeFieldContainer[TrickyTwistCard]
    trick: _containers.RepeatedCompositeFieldContainer[TrickyTwistPlayedCard]
    led_family: str
    supply: _containers.RepeatedCompositeFieldContainer[TrickyTwistBonus]
    bonus_out: _containers.RepeatedScalarFieldContainer[str]
    players: _containers.RepeatedCompositeFieldContainer[TrickyTwistPlayer]
    decision: TrickyTwistDecision
    end_choices: _containers.RepeatedCompositeFieldContainer[TrickyTwistEndChoice]
    last_round: _containers.RepeatedCompositeFieldContainer[TrickyTwistRoundRow]
    past_scoring_cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., num_players: _Optional[int] = ..., phase: _Optional[str] = ..., to_act: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., first_player: _Optional[int] = ..., leader: _Optional[int] = ..., scoring_card: _Optional[str] = ..., scoring_cards_left: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., hand: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ..., reserve: _Optional[_Iterable[_Union[TrickyTwistCard, _Mapping]]] = ..., trick: _Optional[_Iterable[_Union[TrickyTwistPlayedCard, _Mapping]]] = ..., led_family: _Optional[str] = ..., supply: _Optional[_Iterable[_Union[TrickyTwistBonus, _Mapping]]] = ..., bonus_out: _Optional[_Iterable[str]] = ..., players: _Optional[_Iterable[_Union[TrickyTwistPlayer, _Mapping]]] = ..., decision: _Optional[_Union[TrickyTwistDecision, _Mapping]] = ..., end_choices: _Optional[_Iterable[_Union[TrickyTwistEndChoice, _Mapping]]] = ..., last_round: _Optional[_Iterable[_Union[TrickyTwistRoundRow, _Mapping]]] = ..., past_scoring_cards: _Optional[_Iterable[str]] = ...) -> None: ...

class TwistedSeat(_message.Message):
    __slots__ = ("seat", "hand_count", "plus_pile", "minus_pile", "round_score", "total", "minus_face_down")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_COUNT_FIELD_NUMBER: _ClassVar[int]
    PLUS_PILE_FIELD_NUMBER: _ClassVar[int]
    MINUS_PILE_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    MINUS_FACE_DOWN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_count: int
    plus_pile: _containers.RepeatedScalarFieldContainer[int]
    minus_pile: _containers.RepeatedScalarFieldContainer[int]
    round_score: int
    total: int
    minus_face_down: int
    def __init__(self, seat: _Optional[int] = ..., hand_count: _Optional[int] = ..., plus_pile: _Optional[_Iterable[int]] = ..., minus_pile: _Optional[_Iterable[int]] = ..., round_score: _Optional[int] = ..., total: _Optional[int] = ..., minus_face_down: _Optional[int] = ...) -> None: ...

class TwistedObservation(_message.Message):
    __slots__ = ("game", "seat", "phase", "to_act", "scores", "round", "rounds", "starter", "turn", "hand", "row", "extend_distance", "extend_low", "extend_high", "draw_pile", "expert", "seats")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    EXTEND_DISTANCE_FIELD_NUMBER: _ClassVar[int]
    EXTEND_LOW_FIELD_NUMBER: _ClassVar[int]
    EXTEND_HIGH_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_FIELD_NUMBER: _ClassVar[int]
    EXPERT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    phase: str
    to_act: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    round: int
    rounds: int
    starter: int
    turn: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    row: _containers.RepeatedScalarFieldContainer[int]
    extend_distance: int
    extend_low: int
    extend_high: int
    draw_pile: int
    expert: bool
    seats: _containers.RepeatedCompositeFieldContainer[TwistedSeat]
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., phase: _Optional[str] = ..., to_act: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., starter: _Optional[int] = ..., turn: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., row: _Optional[_Iterable[int]] = ..., extend_distance: _Optional[int] = ..., extend_low: _Optional[int] = ..., extend_high: _Optional[int] = ..., draw_pile: _Optional[int] = ..., expert: _Optional[bool] = ..., seats: _Optional[_Iterable[_Union[TwistedSeat, _Mapping]]] = ...) -> None: ...

class TwistedPublicView(_message.Message):
    __slots__ = ("game", "seat", "phase", "to_act", "scores", "round", "rounds", "starter", "turn", "hand", "row", "extend_distance", "extend_low", "extend_high", "draw_pile", "expert", "seats")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    EXTEND_DISTANCE_FIELD_NUMBER: _ClassVar[int]
    EXTEND_LOW_FIELD_NUMBER: _ClassVar[int]
    EXTEND_HIGH_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_FIELD_NUMBER: _ClassVar[int]
    EXPERT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    phase: str
    to_act: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    round: int
    rounds: int
    starter: int
    turn: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    row: _containers.RepeatedScalarFieldContainer[int]
    extend_distance: int
    extend_low: int
    extend_high: int
    draw_pile: int
    expert: bool
    seats: _containers.RepeatedCompositeFieldContainer[TwistedSeat]
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., phase: _Optional[str] = ..., to_act: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., starter: _Optional[int] = ..., turn: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., row: _Optional[_Iterable[int]] = ..., extend_distance: _Optional[int] = ..., extend_low: _Optional[int] = ..., extend_high: _Optional[int] = ..., draw_pile: _Optional[int] = ..., expert: _Optional[bool] = ..., seats: _Optional[_Iterable[_Union[TwistedSeat, _Mapping]]] = ...) -> None: ...

class TwhistCard(_message.Message):
    __slots__ = ("id", "colour", "value")
    ID_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    id: int
    colour: str
    value: int
    def __init__(self, id: _Optional[int] = ..., colour: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...

class TwhistTrickCard(_message.Message):
    __slots__ = ("seat", "card", "twhist")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TWHIST_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: TwhistCard
    twhist: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[TwhistCard, _Mapping]] = ..., twhist: _Optional[str] = ...) -> None: ...

class TwhistPlayer(_message.Message):
    __slots__ = ("seat", "hand_count", "twhist_count", "twhist_names", "star_side", "stars", "star_cards", "void")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_COUNT_FIELD_NUMBER: _ClassVar[int]
    TWHIST_COUNT_FIELD_NUMBER: _ClassVar[int]
    TWHIST_NAMES_FIELD_NUMBER: _ClassVar[int]
    STAR_SIDE_FIELD_NUMBER: _ClassVar[int]
    STARS_FIELD_NUMBER: _ClassVar[int]
    STAR_CARDS_FIELD_NUMBER: _ClassVar[int]
    VOID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_count: int
    twhist_count: int
    twhist_names: _containers.RepeatedScalarFieldContainer[str]
    star_side: _containers.RepeatedScalarFieldContainer[int]
    stars: int
    star_cards: int
    void: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., hand_count: _Optional[int] = ..., twhist_count: _Optional[int] = ..., twhist_names: _Optional[_Iterable[str]] = ..., star_side: _Optional[_Iterable[int]] = ..., stars: _Optional[int] = ..., star_cards: _Optional[int] = ..., void: _Optional[_Iterable[str]] = ...) -> None: ...

class TwhistRules(_message.Message):
    __slots__ = ("colours", "values", "flip_min", "flip_max", "stars", "equal_values", "twhist_visible", "every_pass_sits_out")
    COLOURS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    FLIP_MIN_FIELD_NUMBER: _ClassVar[int]
    FLIP_MAX_FIELD_NUMBER: _ClassVar[int]
    STARS_FIELD_NUMBER: _ClassVar[int]
    EQUAL_VALUES_FIELD_NUMBER: _ClassVar[int]
    TWHIST_VISIBLE_FIELD_NUMBER: _ClassVar[int]
    EVERY_PASS_SITS_OUT_FIELD_NUMBER: _ClassVar[int]
    colours: _containers.RepeatedScalarFieldContainer[str]
    values: _containers.RepeatedScalarFieldContainer[int]
    flip_min: int
    flip_max: int
    stars: _containers.RepeatedScalarFieldContainer[int]
    equal_values: str
    twhist_visible: bool
    every_pass_sits_out: bool
    def __init__(self, colours: _Optional[_Iterable[str]] = ..., values: _Optional[_Iterable[int]] = ..., flip_min: _Optional[int] = ..., flip_max: _Optional[int] = ..., stars: _Optional[_Iterable[int]] = ..., equal_values: _Optional[str] = ..., twhist_visible: _Optional[bool] = ..., every_pass_sits_out: _Optional[bool] = ...) -> None: ...

class TwhistObservation(_message.Message):
    __slots__ = ("game", "phase", "to_act", "scores", "dealer", "leader", "tricks_done", "tricks_total", "lead_colour", "trick", "picker", "next_leader", "picked", "pool", "open_cards", "discard", "players", "rules", "seat", "hand", "twhist_hand")
    GAME_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICKS_DONE_FIELD_NUMBER: _ClassVar[int]
    TRICKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    LEAD_COLOUR_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    PICKER_FIELD_NUMBER: _ClassVar[int]
    NEXT_LEADER_FIELD_NUMBER: _ClassVar[int]
    PICKED_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    OPEN_CARDS_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TWHIST_HAND_FIELD_NUMBER: _ClassVar[int]
    game: str
    phase: str
    to_act: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    dealer: int
    leader: int
    tricks_done: int
    tricks_total: int
    lead_colour: str
    trick: _containers.RepeatedCompositeFieldContainer[TwhistTrickCard]
    picker: int
    next_leader: int
    picked: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    pool: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    open_cards: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    discard: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    players: _containers.RepeatedCompositeFieldContainer[TwhistPlayer]
    rules: TwhistRules
    seat: int
    hand: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    twhist_hand: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game: _Optional[str] = ..., phase: _Optional[str] = ..., to_act: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., dealer: _Optional[int] = ..., leader: _Optional[int] = ..., tricks_done: _Optional[int] = ..., tricks_total: _Optional[int] = ..., lead_colour: _Optional[str] = ..., trick: _Optional[_Iterable[_Union[TwhistTrickCard, _Mapping]]] = ..., picker: _Optional[int] = ..., next_leader: _Optional[int] = ..., picked: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., pool: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., open_cards: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., discard: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[TwhistPlayer, _Mapping]]] = ..., rules: _Optional[_Union[TwhistRules, _Mapping]] = ..., seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., twhist_hand: _Optional[_Iterable[str]] = ...) -> None: ...

class TwhistPublicView(_message.Message):
    __slots__ = ("game", "phase", "to_act", "scores", "dealer", "leader", "tricks_done", "tricks_total", "lead_colour", "trick", "picker", "next_leader", "picked", "pool", "open_cards", "discard", "players", "rules")
    GAME_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICKS_DONE_FIELD_NUMBER: _ClassVar[int]
    TRICKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    LEAD_COLOUR_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    PICKER_FIELD_NUMBER: _ClassVar[int]
    NEXT_LEADER_FIELD_NUMBER: _ClassVar[int]
    PICKED_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    OPEN_CARDS_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    game: str
    phase: str
    to_act: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    dealer: int
    leader: int
    tricks_done: int
    tricks_total: int
    lead_colour: str
    trick: _containers.RepeatedCompositeFieldContainer[TwhistTrickCard]
    picker: int
    next_leader: int
    picked: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    pool: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    open_cards: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    discard: _containers.RepeatedCompositeFieldContainer[TwhistCard]
    players: _containers.RepeatedCompositeFieldContainer[TwhistPlayer]
    rules: TwhistRules
    def __init__(self, game: _Optional[str] = ..., phase: _Optional[str] = ..., to_act: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., dealer: _Optional[int] = ..., leader: _Optional[int] = ..., tricks_done: _Optional[int] = ..., tricks_total: _Optional[int] = ..., lead_colour: _Optional[str] = ..., trick: _Optional[_Iterable[_Union[TwhistTrickCard, _Mapping]]] = ..., picker: _Optional[int] = ..., next_leader: _Optional[int] = ..., picked: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., pool: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., open_cards: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., discard: _Optional[_Iterable[_Union[TwhistCard, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[TwhistPlayer, _Mapping]]] = ..., rules: _Optional[_Union[TwhistRules, _Mapping]] = ...) -> None: ...
