package main

// The forkjoin suite's inputs, sequential parts and checksums: a translation of
// bench/peers/common/cxx/forkjoin_work.hpp.

const (
	treeNodes  = 1 << 22
	sortN      = 10_000_000
	sortCutoff = 2048
	matN       = 512
	matLeaf    = 8
	none       = -1
)

// node: children are indices into the node array (none: no child), the C++ side's layout.
type node struct {
	value       uint64
	left, right int
}

func buildTree() []node {
	t := make([]node, treeNodes)
	for i := range t {
		t[i].value = uint64(uint32(i) * 2654435761)
		t[i].left, t[i].right = none, none
		if 2*i+1 < treeNodes {
			t[i].left = 2*i + 1
		}
		if 2*i+2 < treeNodes {
			t[i].right = 2*i + 2
		}
	}
	return t
}

func treeExpected() uint64 {
	var s uint64
	for i := 0; i < treeNodes; i++ {
		s += uint64(uint32(i) * 2654435761)
	}
	return s
}

func treeJoins() uint64 {
	var n uint64
	for i := 0; i < treeNodes; i++ {
		if 2*i+2 < treeNodes {
			n++
		}
	}
	return n
}

func sortInput() []uint32 {
	v := make([]uint32, sortN)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[i] = uint32(x >> 32)
	}
	return v
}

func partition(a []uint32) int {
	n := len(a)
	mid := n / 2
	if a[mid] < a[0] {
		a[mid], a[0] = a[0], a[mid]
	}
	if a[n-1] < a[0] {
		a[n-1], a[0] = a[0], a[n-1]
	}
	if a[n-1] < a[mid] {
		a[n-1], a[mid] = a[mid], a[n-1]
	}
	p := a[mid]
	i, j := 0, n-1
	for {
		for a[i] < p {
			i++
		}
		for a[j] > p {
			j--
		}
		if i >= j {
			return j + 1
		}
		a[i], a[j] = a[j], a[i]
		i++
		j--
	}
}

func insertionSort(a []uint32) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for j > 0 && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}

func seqSort(a []uint32) {
	for len(a) > 16 {
		m := partition(a)
		seqSort(a[:m])
		a = a[m:]
	}
	insertionSort(a)
}

func sortChecksum(v []uint32) uint64 {
	var s uint64
	for i := range v {
		if i > 0 && v[i-1] > v[i] {
			return ^uint64(0)
		}
		s += uint64(v[i]) * uint64(i+1)
	}
	return s & 0x7FFF_FFFF_FFFF_FFFF
}

type matrices struct{ a, b, c []float64 }

func matInput() *matrices {
	m := &matrices{make([]float64, matN*matN), make([]float64, matN*matN), make([]float64, matN*matN)}
	for i := 0; i < matN; i++ {
		for j := 0; j < matN; j++ {
			m.a[i*matN+j] = float64((7*i+3*j)%11 - 5)
			m.b[i*matN+j] = float64((5*i+2*j)%13 - 6)
		}
	}
	return m
}

func matLeafMul(m *matrices, c, a, b, n int) {
	s := matN
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			aik := m.a[a+i*s+k]
			for j := 0; j < n; j++ {
				m.c[c+i*s+j] += aik * m.b[b+k*s+j]
			}
		}
	}
}

func matChecksum(c []float64) uint64 {
	var s int64
	for i := 0; i < matN; i++ {
		for j := 0; j < matN; j++ {
			s += int64(c[i*matN+j]) * int64((i+j)%7+1)
		}
	}
	return uint64(s) & 0x7FFF_FFFF_FFFF_FFFF
}

func matExpected(m *matrices) uint64 {
	c := make([]float64, matN*matN)
	for i := 0; i < matN; i++ {
		for k := 0; k < matN; k++ {
			aik := m.a[i*matN+k]
			for j := 0; j < matN; j++ {
				c[i*matN+j] += aik * m.b[k*matN+j]
			}
		}
	}
	return matChecksum(c)
}
