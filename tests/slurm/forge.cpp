// Test helper for tests/slurm/adversarial_test.sh: what a hostile user can try through
// libslurm that sbatch/scontrol do not offer. Run as the unprivileged test user.
//   forge submit-admin-comment PARTITION ACCOUNT TEXT   submit a job that sets AdminComment
//   forge update-admin-comment JOBID TEXT               set a job's AdminComment
// Prints "accepted ..." or "refused: <Slurm's message>"; exit 0 either way (1: usage).
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: forge submit-admin-comment PARTITION ACCOUNT TEXT | "
                 "update-admin-comment JOBID TEXT\n");
    return 1;
  }
  slurm_init(nullptr);
  const std::string cmd = argv[1];
  int rc = SLURM_ERROR;
  if (cmd == "submit-admin-comment" && argc >= 5) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    std::string script = "#!/bin/bash\nsleep 1\n", name = "forge", part = argv[2], acct = argv[3],
                text = argv[4], dir = "/tmp", gres = "gres:gpu:1";
    d.name = name.data();
    d.script = script.data();
    d.partition = part.data();
    d.account = acct.data();
    d.admin_comment = text.data();
    d.work_dir = dir.data();
    d.tres_per_node = gres.data();
    d.std_out = const_cast<char*>("/dev/null");
    d.user_id = getuid();
    d.group_id = getgid();
    d.min_nodes = 1;
    d.environment = environ;
    d.env_size = 0;
    while (environ[d.env_size]) ++d.env_size;
    submit_response_msg_t* resp = nullptr;
    rc = slurm_submit_batch_job(&d, &resp);
    if (rc == SLURM_SUCCESS) {
      std::printf("accepted job %u\n", resp->job_id);
      slurm_free_submit_response_response_msg(resp);
    }
  } else if (cmd == "update-admin-comment") {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    std::string id = argv[2], text = argv[3];
    d.job_id_str = id.data();
    d.admin_comment = text.data();
    job_array_resp_msg_t* resp = nullptr;
    rc = slurm_update_job2(&d, &resp);
    if (resp) {
      for (uint32_t i = 0; i < resp->job_array_count && rc == SLURM_SUCCESS; ++i)
        if (resp->error_code[i]) {
          slurm_seterrno(static_cast<int>(resp->error_code[i]));
          rc = SLURM_ERROR;
        }
      slurm_free_job_array_resp(resp);
    }
    if (rc == SLURM_SUCCESS) std::printf("accepted update of %s\n", id.c_str());
  } else {
    std::fprintf(stderr, "unknown command %s\n", cmd.c_str());
    return 1;
  }
  if (rc != SLURM_SUCCESS) std::printf("refused: %s\n", slurm_strerror(slurm_get_errno()));
  slurm_fini();
  return 0;
}
