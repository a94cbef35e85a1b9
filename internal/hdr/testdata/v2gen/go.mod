module kbench.test/hdr/v2gen

go 1.24

require github.com/HdrHistogram/hdrhistogram-go v1.4.0
