#!/usr/bin/env bash
# Creates a test user of the cluster in BASE as a client certificate signed by the cluster's
# CA: CN=NAME, one O= per GROUP (Kubernetes reads them as the user's groups). The user gets
# no rights here: tests bind the Roles they mean to grant. Writes BASE/users/NAME.kubeconfig
# (certificates inlined) and prints its path.
# Usage: BASE=$BASE scripts/k8s/add-user.sh NAME [GROUP...]
# e.g.   BASE=$BASE scripts/k8s/add-user.sh alice tenant-alpha
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BASE:?set BASE}"
source "$HERE/lib.sh"
name=${1:?usage: add-user.sh NAME [GROUP...]}
shift
[[ $name =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || { echo "add-user.sh: bad user name '$name'" >&2; exit 2; }
subj=""
for g in "$@"; do
  case $g in system:masters | system:nodes) echo "add-user.sh: $g would make $name privileged" >&2; exit 2 ;; esac
  subj="$subj/O=$g"
done
mkdir -p "$BASE/users"
sign_cert "$BASE/users" "$name" "$subj/CN=$name"
write_kubeconfig "$BASE/users/$name.kubeconfig" "$name" "$BASE/users/$name.crt" "$BASE/users/$name.key" embed
echo "$BASE/users/$name.kubeconfig"
