"""One live match on this node: its referee (seats, decisions, clock, the
fenced appends), the Matches/Play/Watch servicers, match creation and the
export of finished matches."""
