//go:build linux

package podsandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Status is what the sandbox reports of one container, in the file
// StatusPath names, rewritten whenever a process starts or ends.
type Status struct {
	Name string `json:"name"`
	Init bool   `json:"init,omitempty"`
	// PID is the running process's, 0 while none runs.
	PID int `json:"pid"`
	// Root is the container's root (its processes' /) for a container run
	// from an image, empty for a program of the host.
	Root string `json:"root,omitempty"`
	// Started is when the current or last process started.
	Started  time.Time `json:"started"`
	Restarts int       `json:"restarts"`
	// LastExit says how the last process ended or why it did not start.
	LastExit string `json:"lastExit,omitempty"`
	// Completed is set once an init container has exited 0.
	Completed bool `json:"completed,omitempty"`
}

// StatusPath is where the sandbox of scratch reports a container's Status.
func StatusPath(scratch, container string) string {
	return filepath.Join(scratch, "status", container+".json")
}

// runContainers sets up the containers' roots, runs the init containers
// in order, each until it succeeds, then every container until SIGTERM or
// SIGINT, restarting those that exit, and finally stops them.
func runContainers(spec Spec) (int, error) {
	stop := make(chan struct{})
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		close(stop)
	}()
	if err := os.MkdirAll(filepath.Join(spec.Scratch, "status"), 0o755); err != nil {
		return 1, err
	}
	roots := map[string]string{}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if c.Root == nil {
			continue
		}
		root, err := setUpRoot(spec.Scratch, c)
		if err != nil {
			return 1, fmt.Errorf("the root of container %s: %w", c.Name, err)
		}
		roots[c.Name] = root
	}
	for _, c := range spec.InitContainers {
		if !supervise(spec.Scratch, c, roots[c.Name], true, stop) {
			return 0, nil
		}
	}
	var wg sync.WaitGroup
	for _, c := range spec.Containers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			supervise(spec.Scratch, c, roots[c.Name], false, stop)
		}()
	}
	wg.Wait()
	return 0, nil
}

// supervise runs the container, restarting it after 1s, 2s, 4s… (at most
// 20s) whenever it exits, until stop is closed (then it sends SIGTERM) or,
// for an init container, until it exits 0. It tells whether the init
// container succeeded.
func supervise(scratch string, c Container, root string, init bool, stop <-chan struct{}) bool {
	st := Status{Name: c.Name, Init: init, Root: root}
	delay := time.Second
	for {
		st.Started = time.Now()
		cmd, err := startContainer(c, root)
		if err == nil {
			st.PID = cmd.Process.Pid
			writeStatus(scratch, st)
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			select {
			case <-stop:
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-exited:
				case <-time.After(5 * time.Second):
					_ = cmd.Process.Kill()
				}
				return false
			case <-exited:
				st.PID, st.LastExit = 0, cmd.ProcessState.String()
				fmt.Fprintf(os.Stderr, "container %s exited: %v\n", c.Name, cmd.ProcessState)
				if init && cmd.ProcessState.Success() {
					st.Completed = true
					writeStatus(scratch, st)
					return true
				}
			}
		} else {
			st.LastExit = err.Error()
			fmt.Fprintf(os.Stderr, "container %s: %v\n", c.Name, err)
		}
		st.Restarts++
		writeStatus(scratch, st)
		if time.Since(st.Started) > time.Minute {
			delay = time.Second
		}
		select {
		case <-stop:
			return false
		case <-time.After(delay):
		}
		delay = min(2*delay, 20*time.Second)
	}
}

// writeStatus replaces the container's status file (rename: readers never
// see half of one).
func writeStatus(scratch string, st Status) {
	raw, _ := json.Marshal(st)
	path := StatusPath(scratch, st.Name)
	if err := os.WriteFile(path+".tmp", raw, 0o644); err == nil {
		_ = os.Rename(path+".tmp", path)
	}
}

// startContainer starts the container's process: chrooted into root for
// a container from an image, else the host program Argv[0].
func startContainer(c Container, root string) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if c.Root != nil {
		var err error
		if cmd, err = commandInRoot(root, c); err != nil {
			return nil, err
		}
	} else {
		cmd = exec.Command(c.Argv[0], c.Argv[1:]...)
		cmd.Env = c.Env
		// Dies with the sandbox even if the sandbox is killed outright.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	out := io.Writer(os.Stdout)
	if c.Log != "" {
		f, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		out = f
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.Argv[0], err)
	}
	return cmd, nil
}
