package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The image's user: distroless's nonroot, numeric so that runAsNonRoot can check it.
const (
	nonrootID   = 65532
	imageUser   = "65532:65532"
	caBundleDst = "etc/ssl/certs/ca-certificates.crt"
)

// passwd and group are the image's accounts, as in distroless.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
	// nsswitch.conf makes Go's resolver read /etc/hosts before DNS.
	nsswitch = "hosts: files dns\n"
)

// entry is one file or directory of a layer, owned by root unless uid says.
type entry struct {
	name string // relative to /, no leading slash
	mode int64
	uid  int
	dir  bool
	data []byte // the content, or
	from string // the file to copy it from
}

// baseEntries are what the binaries need around them: the accounts, a CA
// bundle, a home for the user, /tmp, and /bin/cp.
func baseEntries(o *options, cp string) []entry {
	return []entry{
		{name: "bin", mode: 0o755, dir: true},
		{name: "bin/cp", mode: 0o755, from: cp},
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte(nsswitch)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl", mode: 0o755, dir: true},
		{name: "etc/ssl/certs", mode: 0o755, dir: true},
		{name: caBundleDst, mode: 0o644, from: o.caBundle},
		{name: "home", mode: 0o755, dir: true},
		{name: "home/nonroot", mode: 0o700, uid: nonrootID, dir: true},
		{name: "root", mode: 0o700, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
	}
}

// commandEntries put the bundle's commands at the image root.
func commandEntries(b binaries) []entry {
	var entries []entry
	for _, c := range b.commands {
		entries = append(entries, entry{name: c, mode: 0o755, from: filepath.Join(b.dir, c)})
	}
	return entries
}

// writeTar writes entries as an uncompressed layer, every time mtime, so
// that the same inputs give the same layer.
func writeTar(path string, entries []entry, mtime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	tw := tar.NewWriter(f)
	for _, e := range entries {
		if err := writeEntry(tw, e, mtime); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime}
	if e.dir {
		h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		return tw.WriteHeader(h)
	}
	h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
	if e.from == "" {
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(e.data)
		return err
	}
	src, err := os.Open(e.from)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	h.Size = st.Size()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = io.Copy(tw, src)
	return err
}
