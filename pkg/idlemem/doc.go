// Package idlemem hands back to the system the memory an idle process does not use: the heap a
// burst grew (debug.FreeOSMemory) and the pages of its own executable that only the start or the
// burst needed.
//
// A Go binary's code and constants are mapped from its file; after the start touched them, the
// kernel keeps them in the process (on current kernels in large folios, so nearly the whole file
// counts towards RSS). Keep tells the kernel to read the executable page by page instead of ahead
// (MADV_RANDOM), drops the pages the start needed once it is over (MADV_PAGEOUT, so the page cache
// keeps only what is used next), and after a busy period unmaps the pages again once the process
// is idle; between releases, every TrimEvery of an idle process, the pages its periodic work mapped
// are unmapped again (MADV_DONTNEED: the page cache still holds them, so the next round maps them
// back without a read). What is left resident is what the process uses.
package idlemem
