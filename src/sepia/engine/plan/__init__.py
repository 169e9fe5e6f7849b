"""Planning: a query's algebra compiled into its physical plan, and that plan as text for
``sepia explain``."""
