package journal

// FakeVolume stands for the file system under a mirror in the tests: Free
// reports the bytes free, Write is told of every write and may fail it.
type FakeVolume struct {
	Free  func() uint64
	Write func(name string, n int) error
}

func (v FakeVolume) free(string) (uint64, error) { return v.Free(), nil }

func (v FakeVolume) write(name string, n int) error { return v.Write(name, n) }

// SetVolume makes m see v instead of the real file system.
func SetVolume(m *Mirror, v FakeVolume) { m.vol = v }
