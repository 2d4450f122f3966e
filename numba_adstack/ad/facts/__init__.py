"""Facts about one typed function, read by the plan, emission and forward mode: its
definitions, uses, loops and regions (:mod:`.ir_facts`, :mod:`.structure`), what arrays it
writes (:mod:`.array_facts`), which values are active (:mod:`.activity`), the checks that
refuse what cannot be differentiated (:mod:`.checks`, :mod:`.view_checks`), and how a call
binds to its rule (:mod:`.rule_binding`)."""
