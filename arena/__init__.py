"""Where agents meet: matches and seeding, statistics, luck correction, reports; ``python -m arena``.

==================== ===============================================================
``arena.match``      :func:`play_match`: duplicate deals, seeding, the worker pool
``arena.stats``      95% intervals: :func:`mean_ci`, :func:`combine` (scipy.stats)
``arena.luck``       the luck correction, a control variate computed by the referee
``arena.results``    the result types: ``MatchResult``, ``TournamentConfig``, ``TournamentResult``
``arena.report``     the terminal table, ``crosstable.csv``/``.png``, ``results.json``
``arena.tournament`` every match of a set of agents, the cross-table, the command line
==================== ===============================================================
"""
