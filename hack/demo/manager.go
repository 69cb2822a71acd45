package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// managerStopGrace is how long the manager gets to exit after SIGTERM. It is
// longer than the --graceful-shutdown-timeout it is started with.
const managerStopGrace = 10 * time.Second

// managerProcess is the clusterprofile-manager binary running as a child.
type managerProcess struct {
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	started time.Time
	// exited is closed when the process has exited; err is then its result.
	exited chan struct{}
	err    error
}

// startManager runs the manager binary against the hub, logging to a file.
func startManager(path string, h *hub) (*managerProcess, error) {
	logPath := filepath.Join(h.dir, "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the manager log: %w", err)
	}
	args := managerArgs(h)
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The demo stops the manager itself, before the control plane: in its
	// own process group it does not also get the terminal's Ctrl-C.
	cmd.SysProcAttr = childProcAttr()
	started := time.Now()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	m := &managerProcess{cmd: cmd, logPath: logPath, logFile: logFile, started: started, exited: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		close(m.exited)
	}()
	fmt.Printf("\nStarted clusterprofile-manager (pid %d):\n    %s %s\n", cmd.Process.Pid, displayPath(path), strings.Join(args, " "))
	fmt.Printf("    its log: %s\n", displayPath(logPath))
	return m, nil
}

func managerArgs(h *hub) []string {
	var args []string
	if h.kubeconfig != "" {
		args = append(args, "--kubeconfig", displayPath(h.kubeconfig))
	}
	args = append(args,
		"--feature-gates=ClusterProfile=true",
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
		"--graceful-shutdown-timeout=5s",
		// V(2) logs every profile the mirror creates, updates or deletes.
		"--zap-log-level=2",
		"--zap-encoder=console",
	)
	if h.existing {
		args = append(args, "--cluster-manager-name="+h.managerName)
	}
	return args
}

// stop ends the manager with SIGTERM and kills it if it does not exit in time.
func (m *managerProcess) stop() error {
	defer m.logFile.Close()
	select {
	case <-m.exited:
		return nil // already gone; waits report why
	default:
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return m.kill(fmt.Errorf("sending SIGTERM: %w", err))
	}
	select {
	case <-m.exited:
		return nil
	case <-time.After(managerStopGrace):
		return m.kill(fmt.Errorf("no exit within %s of SIGTERM", managerStopGrace))
	}
}

func (m *managerProcess) kill(reason error) error {
	if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%w; killing it failed too: %w", reason, err)
	}
	<-m.exited
	return fmt.Errorf("%w: killed it", reason)
}

// exitError describes an unexpected exit, with the end of the log.
func (m *managerProcess) exitError() error {
	return fmt.Errorf("clusterprofile-manager exited unexpectedly (%v); the end of %s:\n%s",
		m.err, displayPath(m.logPath), logTail(m.logPath, 15))
}

// logTail returns the last lines of a file, indented.
func logTail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "    (unreadable: " + err.Error() + ")"
	}
	text := strings.TrimRight(string(bytes.ToValidUTF8(data, nil)), "\n")
	if text == "" {
		return "    (the log is empty)"
	}
	all := strings.Split(text, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return "    " + strings.Join(all, "\n    ")
}
