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
Cmd = "/opt/tools/greet"
TransferExecutable = false
DiskUsage = 1
ImageSize = 1
Args = "hello world"
Environment = "GREETING=hi TARGET=world"
In = "/dev/null"
Out = "hello.0.out"
Err = "/dev/null"
TransferIn = false
StreamOut = false
TransferErr = false
ShouldTransferFiles = "IF_NEEDED"
WhenToTransferOutput = "ON_EXIT"
FileSystemDomain = "@FSDOMAIN@"
TransferInputSizeMB = 1
JobPrio = 0
NiceUser = false
RequestCpus = 1
RequestMemory = ifThenElse(MemoryUsage =!= undefined,MemoryUsage,1)
RequestDisk = DiskUsage
Rank = 0.0
Requirements = (TARGET.Arch == "@ARCH@") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))
JobLeaseDuration = 1200

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
Cmd = "/opt/tools/greet"
TransferExecutable = false
DiskUsage = 1
ImageSize = 1
Args = "hello world"
Environment = "GREETING=hi TARGET=world"
In = "/dev/null"
Out = "hello.1.out"
Err = "/dev/null"
TransferIn = false
StreamOut = false
TransferErr = false
ShouldTransferFiles = "IF_NEEDED"
WhenToTransferOutput = "ON_EXIT"
FileSystemDomain = "@FSDOMAIN@"
TransferInputSizeMB = 1
JobPrio = 0
NiceUser = false
RequestCpus = 1
RequestMemory = ifThenElse(MemoryUsage =!= undefined,MemoryUsage,1)
RequestDisk = DiskUsage
Rank = 0.0
Requirements = (TARGET.Arch == "@ARCH@") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))
JobLeaseDuration = 1200

MyType = "Job"
TargetType = "Machine"
ClusterId = 42
ProcId = 2
Owner = "alice"
QDate = 1700000000
EnteredCurrentStatus = 1700000000
JobStatus = 1
JobUniverse = 5
Iwd = "@DIR@"
Cmd = "/opt/tools/greet"
TransferExecutable = false
DiskUsage = 1
ImageSize = 1
Args = "goodbye world"
Environment = "GREETING=hi TARGET=world"
In = "/dev/null"
Out = "hello.2.out"
Err = "/dev/null"
TransferIn = false
StreamOut = false
TransferErr = false
ShouldTransferFiles = "IF_NEEDED"
WhenToTransferOutput = "ON_EXIT"
FileSystemDomain = "@FSDOMAIN@"
TransferInputSizeMB = 1
JobPrio = -3
NiceUser = true
RequestCpus = 1
RequestMemory = ifThenElse(MemoryUsage =!= undefined,MemoryUsage,1)
RequestDisk = DiskUsage
Rank = 0.0
Requirements = (TARGET.Arch == "@ARCH@") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))
KillSig = "SIGINT"
MaxJobRetirementTime = 0
JobLeaseDuration = 3600

