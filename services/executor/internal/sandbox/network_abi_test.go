package sandbox

import "testing"

func TestHostNetworkNeedsTCPPortRules(t *testing.T) {
	for _, tc := range []struct {
		network string
		abi     int
		ok      bool
	}{
		{NetworkAllow, 3, false},
		{NetworkAllow, 1, false},
		{NetworkAllow, 4, true},
		{NetworkAllow, 7, true},
		{"none", 1, true},
	} {
		if err := networkNeedsABI(tc.network, tc.abi); (err == nil) != tc.ok {
			t.Errorf("network %s on ABI %d: %v", tc.network, tc.abi, err)
		}
	}
}
