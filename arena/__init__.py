"""cardarena arena: running bots and competitions (protocol, processes, matches,
schedules, execution on Ray, the journal, ratings, reports, configuration, CLI)."""
