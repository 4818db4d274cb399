"""The contract's side of encoding: engine values to contract messages, hot messages
as wire bytes, and the contract's metadata keys and page tokens.

It imports only ``twistarena.v1``, so the server, the clients and the
benchmark's yardstick (``clients/twistarena/tools/pingpong.py``) encode alike
without importing each other. Engine values arrive as plain data (dicts, and
actions and games by the shape ``LegalActionLike``/``Narrator``).

One module per concern; every name below is importable from the package too:

``messages``  engine dicts to contract messages, the contract's constants
``schemas``   the compiled message encoder (``_encode``) and its schemas
``fields``    varints, field keys, length-delimited fields
``actions``   legal actions as encoded entries, kept per game and vocabulary
``frames``    the hot messages (decisions, acceptances, events) as bytes
``narrow``    a ServerMessage's ids without parsing the rest
``metadata``  gRPC metadata keys (reason, owner and retry hints, runner session)
``pages``     page tokens of the List calls
"""

from __future__ import annotations

from .actions import (
    VOCABULARIES_KEPT,
    ActionCache,
    ActionVocabulary,
    action_cache,
    match_vocabulary,
)
from .fields import length_delimited, varint, varint_field
from .frames import (
    ObservationEncoder,
    ObservationPartLike,
    ObservationSource,
    accepted,
    accepted_message,
    answer_message,
    batch_watch_message,
    batched_fields,
    decision_body,
    decision_message,
    event_bytes,
    event_server_message,
    event_watch_message,
    joined_message,
    joined_without_seat,
    match_id_field,
    observation_bytes,
    public_view_bytes,
    request_message,
    seat_batch_message,
    view_watch_message,
)
from .messages import (
    MATCH_OVER,
    OBSERVATION_CLASSES,
    OBSERVATION_FIELDS,
    PUBLIC_VIEW_CLASSES,
    TOURNAMENT_OVER,
    LegalActionLike,
    Narrator,
    event,
    game_message,
    observation,
    options_dict,
    passthrough_serializer,
    public_view,
    struct,
)
from .metadata import (
    AUTHORIZATION_KEY,
    OWNER_KEY,
    REASON_KEY,
    RETRY_AFTER_KEY,
    RUNNER_SESSION_KEY,
)
from .narrow import DECISION_KIND, SEAT_BATCH_KIND, message_kind, narrow_batch, narrow_decision
from .schemas import Encode, compiled, message_encoder

__all__ = [
    "AUTHORIZATION_KEY", "DECISION_KIND", "MATCH_OVER", "OBSERVATION_CLASSES",
    "OBSERVATION_FIELDS", "OWNER_KEY", "PUBLIC_VIEW_CLASSES", "REASON_KEY", "RETRY_AFTER_KEY",
    "RUNNER_SESSION_KEY", "SEAT_BATCH_KIND", "TOURNAMENT_OVER", "VOCABULARIES_KEPT",
    "ActionCache", "ActionVocabulary", "Encode", "LegalActionLike", "Narrator",
    "ObservationEncoder", "ObservationPartLike", "ObservationSource", "accepted",
    "accepted_message",
    "action_cache", "answer_message", "batch_watch_message", "batched_fields", "compiled",
    "decision_body", "decision_message", "event", "event_bytes", "event_server_message",
    "event_watch_message", "game_message", "joined_message", "joined_without_seat",
    "length_delimited", "match_id_field", "match_vocabulary", "message_encoder",
    "message_kind", "narrow_batch", "narrow_decision", "observation", "observation_bytes",
    "options_dict", "passthrough_serializer", "public_view", "public_view_bytes",
    "request_message", "seat_batch_message", "struct", "varint", "varint_field",
    "view_watch_message",
]
