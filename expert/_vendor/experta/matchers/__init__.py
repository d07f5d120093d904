from .rete import ReteMatcher
