"""One package per game: cards, rules, data table, observation."""
