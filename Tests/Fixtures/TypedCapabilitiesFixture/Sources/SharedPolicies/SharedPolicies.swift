// A library whose generated constants are public, for the modules that import it.

/// Where this module's policy file is, for loading it at run time.
public let billingPolicyFile = String(#filePath.dropLast("SharedPolicies.swift".count)) + "billing.json"
