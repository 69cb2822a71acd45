//go:build linux

package ocmlocal

import (
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

// Process is a program started through the environment: it logs into the
// environment's log directory and is stopped with it.
type Process struct {
	env  *Env
	proc *process.Process
}

// StartProcess runs a program on the host (not sandboxed) as part of the
// environment, e.g. this bundle's manager against the hub; extraEnv is
// added to the harness's environment.
func (e *Env) StartProcess(name string, argv []string, extraEnv ...string) (*Process, error) {
	p, err := e.procs.Start(process.Spec{Name: name, Argv: argv, Env: extraEnv})
	if err != nil {
		return nil, err
	}
	return &Process{env: e, proc: p}, nil
}

// Stop ends the process (SIGTERM, then SIGKILL after 10 s).
func (p *Process) Stop() {
	p.proc.Stop(10 * time.Second)
	p.env.procs.Remove(p.proc)
}

// LogPath is the file that receives the process's output.
func (p *Process) LogPath() string { return p.proc.LogPath() }

// Exited tells whether the process has ended, and how.
func (p *Process) Exited() (bool, error) { return p.proc.Exited() }
