package peer

import "testing"

func TestNearestRankAndMedian(t *testing.T) {
	v := make([]int64, 100)
	for i := range v {
		v[i] = int64(i + 1)
	}
	if NearestRank(v, 50) != 50 || NearestRank(v, 99) != 99 || NearestRank([]int64{7}, 99) != 7 {
		t.Fatal("nearest rank")
	}
	if Median([]float64{4, 1, 3, 2}) != 2.5 || MedianSample([]float64{4, 1, 3, 2}) != 3 {
		t.Fatal("median")
	}
	if s := func() string { l := NewLine().S("a", "x\"y").I("b", 3).F("c", 1.5, 2); return l.b.String() }(); s != `{"a":"x\"y","b":3,"c":1.50` {
		t.Fatal(s)
	}
}
