#!/usr/bin/env bash
# mpirun with the settings parasol needs on one machine; all arguments go to mpirun.
#  - running as root (containers, CI) needs OpenMPI's explicit consent;
#  - more ranks than cores needs --oversubscribe (OpenMPI then also yields when idle);
#  - one-sided windows over user memory need the sm or ucx osc component;
#  - the hwloc runtime-control component is off: parasol binds nothing (--bind-to none), and its
#    shared-memory topology write has crashed OpenMPI 4.1's daemon on network-namespace hosts.
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_osc=${OMPI_MCA_osc:-sm,ucx,rdma,pt2pt}
exec mpirun --oversubscribe --bind-to none --mca rtc ^hwloc "$@"
