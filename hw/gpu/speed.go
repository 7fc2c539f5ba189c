package gpu

// Whole-GPU speed of each GPU type relative to a whole A100-80GB, per model.
//
// The ratios come from MLPerf Inference datacenter, closed division, NVIDIA
// submissions (TensorRT; INT8 for ResNet-50, mixed INT8/FP16 for BERT-99),
// Offline scenario, samples/s from mlperf_log_summary.txt (grade M;
// hardware.md 7). A ratio taken within one MLPerf round is graded D; a ratio
// across rounds also carries the software changes between rounds, noted
// below. Where MLPerf has no number, Gavel's measured training throughputs
// (stanford-futuredata/gavel simulation_throughputs.json, grade M, checked
// against the real file by TestGavelRatios) scale a V100 estimate.
//
// The ratios are applied to the compute times of the A100-80GB MIG tables
// (compute.go), whose software stack differs (framework-level, not
// TensorRT); that a ratio measured under TensorRT carries over is E.

// MLPerf Inference Offline samples/s (M; hardware.md 7, round in the name).
const (
	mlperfR50A100SXM80v11 = 39830.1 // A100-SXM-80GB x1, v1.1
	mlperfR50A100SXM80v30 = 42379.3 // DGX-A100 x1 (80GB), v3.0
	mlperfR50A100SXM40v07 = 37479.5 // A100-SXM4-40GB, v0.7
	mlperfR50H100SXMv31   = 88526.0 // DGX-H100 x1, v3.1
	mlperfR50H100PCIev31  = 54851.4 // H100-PCIe-80GB x1, v3.1
	mlperfR50A30v11       = 18265.0 // A30 x1, v1.1
	mlperfR50A10v11       = 13805.2 // A10 x1, v1.1
	mlperfR50L4v31        = 12881.7 // L4 x1, v3.1
	mlperfR50T4v07        = 6035.57 // T4 x1, v0.7
	mlperfBertA100SXM80v1 = 3614.0  // BERT-99, A100-SXM-80GB x1, v1.1
	mlperfBertH100SXMv31  = 9102.26 // BERT-99, DGX-H100 x1, v3.1
	mlperfBertA10v11      = 1111.46 // BERT-99, A10 x1, v1.1
	mlperfBertL4v31       = 1028.95 // BERT-99, L4 x1, v3.1
)

// Gavel training throughputs, iterations/s on one GPU, largest batch that
// every worker type ran (M; simulation_throughputs.json, key "null").
const (
	gavelR50bs128V100    = 2.4967655780898292 // ResNet-50 (batch size 128), v100
	gavelR50bs128P100    = 1.5843515911819712 // same, p100
	gavelR50bs128K80     = 0.3472236920519382 // same, k80 (one GK210)
	gavelXfmrbs128V100   = 5.44610521981264   // Transformer (batch size 128), v100
	gavelXfmrbs128P100   = 3.0735350560514787 // same, p100
	gavelXfmrbs128K80    = 0.9815827061299781 // same, k80
	v100OverA100Estimate = 0.33               // E: hardware.md 7 gives 0.3-0.35 x A100 (reasoning only, no source); midpoint
)

var (
	relSpeedA100_80 = map[string]float64{"resnet50": 1, "bert": 1} // the reference

	// D: same GA100 chip with less and slower HBM (1.6 vs 2.0 TB/s). The only
	// 40 GB number is from v0.7, a year of TensorRT work before the 80 GB
	// v1.1 one, so 0.941 is a lower bound; BERT: E, same ratio assumed.
	relSpeedA100_40 = map[string]float64{
		"resnet50": mlperfR50A100SXM40v07 / mlperfR50A100SXM80v11, // 0.941
		"bert":     mlperfR50A100SXM40v07 / mlperfR50A100SXM80v11, // E: ResNet-50 ratio reused
	}

	// D across rounds: H100 v3.1 over A100 v3.0 (ResNet-50) and v1.1 (BERT;
	// no later A100 BERT number in hardware.md, so 2.52 overstates a little).
	relSpeedH100 = map[string]float64{
		"resnet50": mlperfR50H100SXMv31 / mlperfR50A100SXM80v30,  // 2.089
		"bert":     mlperfBertH100SXMv31 / mlperfBertA100SXM80v1, // 2.519
	}

	// ResNet-50 D within round v1.1; BERT E: no A30 BERT number, the
	// ResNet-50 ratio is reused.
	relSpeedA30 = map[string]float64{
		"resnet50": mlperfR50A30v11 / mlperfR50A100SXM80v11, // 0.4586
		"bert":     mlperfR50A30v11 / mlperfR50A100SXM80v11, // E
	}

	// H100 NVL (94 GB, PCIe): D across rounds, H100-PCIe v3.1 over A100
	// v3.0, with E that the PCIe-80GB number stands for the NVL part. BERT:
	// E, the H100 SXM BERT ratio scaled by the PCIe/SXM ResNet-50 ratio.
	relSpeedH100NVL = map[string]float64{
		"resnet50": mlperfR50H100PCIev31 / mlperfR50A100SXM80v30,                                              // 1.294
		"bert":     mlperfBertH100SXMv31 / mlperfBertA100SXM80v1 * mlperfR50H100PCIev31 / mlperfR50H100SXMv31, // 1.561
	}

	// H200: E, as the H100 SXM (same GH100 compute; its 1.4x memory
	// bandwidth would help memory-bound work, which this ignores). No H200
	// MLPerf number is in hardware.md.
	relSpeedH200 = relSpeedH100

	// D within round v1.1.
	relSpeedA10 = map[string]float64{
		"resnet50": mlperfR50A10v11 / mlperfR50A100SXM80v11,  // 0.3466
		"bert":     mlperfBertA10v11 / mlperfBertA100SXM80v1, // 0.3075
	}

	// D across rounds: L4 v3.1 over A100 v3.0 (ResNet-50), v1.1 (BERT).
	relSpeedL4 = map[string]float64{
		"resnet50": mlperfR50L4v31 / mlperfR50A100SXM80v30,  // 0.3040
		"bert":     mlperfBertL4v31 / mlperfBertA100SXM80v1, // 0.2847
	}

	// ResNet-50 D within round v0.7 (T4 over A100-40GB) times the
	// A100-40GB/80GB ratio. BERT E: no T4 BERT number; T4/A10 assumed
	// equal to their ResNet-50 ratio.
	relSpeedT4 = map[string]float64{
		"resnet50": mlperfR50T4v07 / mlperfR50A100SXM40v07 * relSpeedA100_40["resnet50"],                                                   // 0.1515
		"bert":     relSpeedA10["bert"] * (mlperfR50T4v07 / mlperfR50A100SXM40v07 * relSpeedA100_40["resnet50"]) / relSpeedA10["resnet50"], // 0.1344
	}

	// E: no V100 MLPerf number found (hardware.md 7, 9.6).
	relSpeedV100 = map[string]float64{"resnet50": v100OverA100Estimate, "bert": v100OverA100Estimate}

	// D from the V100 estimate and Gavel's measured P100/V100 and K80/V100
	// training throughput ratios; Transformer stands in for BERT.
	relSpeedP100 = map[string]float64{
		"resnet50": v100OverA100Estimate * gavelR50bs128P100 / gavelR50bs128V100,   // 0.2094
		"bert":     v100OverA100Estimate * gavelXfmrbs128P100 / gavelXfmrbs128V100, // 0.1862
	}
	relSpeedK80 = map[string]float64{
		"resnet50": v100OverA100Estimate * gavelR50bs128K80 / gavelR50bs128V100,   // 0.0459
		"bert":     v100OverA100Estimate * gavelXfmrbs128K80 / gavelXfmrbs128V100, // 0.0595
	}
)
