"""The validation gates a synthesised module passes, cheapest first: parse and static policy, the contract,
execution of the property suite in the sandbox, the capability check, leakage and calibration."""
