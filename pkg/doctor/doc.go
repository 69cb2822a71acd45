// Package doctor is `kubectl clusterprofile doctor` and `get`: it looks at a
// consumer's namespace the way a consumer (MultiKueue, Argo CD, a custom
// controller) will, and says per cluster what works and, for what does not,
// what to fix: the profile, its access entry for the consumer's providers,
// the token copy, the consumer's right to read it and, on request, a real
// call through the exec plugin.
//
// The checks are pure functions of what was read (Diagnose); Doctor only
// reads the hub and runs the plugin.
package doctor
