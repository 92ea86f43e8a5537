MyType = "Job"
TargetType = "Machine"
ClusterId = 42
ProcId = 0
Owner = "alice"
QDate = 1700000000
EnteredCurrentStatus = 1700000000
JobStatus = 1
JobUniverse = 5
Iwd = "@DIR@"
Cmd = "@DIR@/job.sh"
DiskUsage = 1
ImageSize = 1
Arguments = "--input a.dat --scale 0.5 --label run' '0"
Environment = "OMP_NUM_THREADS=2 RUN=42.0"
In = "/dev/null"
Out = "out/42.0.out"
Err = "out/42.0.err"
UserLog = "@DIR@/sweep.log"
JobPrio = 0
NiceUser = false
RequestCpus = 2
RequestMemory = 1536
RequestDisk = 204800
RequestGpu = 1
Rank = KFlops
Requirements = (OpSysMajorVer >= 12) && (TARGET.Arch == "@ARCH@") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus) && (TARGET.Gpu >= RequestGpu)
JobLeaseDuration = 1200
AcctGroupUser = "alice"
AcctGroup = "group_physics"
AccountingGroup = "group_physics.alice"
Project = "sweep"

MyType = "Job"
TargetType = "Machine"
ClusterId = 42
ProcId = 1
Owner = "alice"
QDate = 1700000000
EnteredCurrentStatus = 1700000000
JobStatus = 1
JobUniverse = 5
Iwd = "@DIR@"
Cmd = "@DIR@/job.sh"
DiskUsage = 1
ImageSize = 1
Arguments = "--input b.dat --scale 1.0 --label run' '1"
Environment = "OMP_NUM_THREADS=2 RUN=42.1"
In = "/dev/null"
Out = "out/42.1.out"
Err = "out/42.1.err"
UserLog = "@DIR@/sweep.log"
JobPrio = 0
NiceUser = false
RequestCpus = 2
RequestMemory = 1536
RequestDisk = 204800
RequestGpu = 1
Rank = KFlops
Requirements = (OpSysMajorVer >= 12) && (TARGET.Arch == "@ARCH@") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus) && (TARGET.Gpu >= RequestGpu)
JobLeaseDuration = 1200
AcctGroupUser = "alice"
AcctGroup = "group_physics"
AccountingGroup = "group_physics.alice"
Project = "sweep"

