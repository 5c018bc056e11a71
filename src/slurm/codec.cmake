# ds_slurm_codec: the Slurm adapter's pure parsing - the controller configuration (YAML),
# DeepShare's record in a job's AdminComment (its keys generated from the gate's table,
# record_keys.cmake), the GRES layout, the Slurm-level port types, the account tree.
# Included by src/slurm/CMakeLists.txt and by the fuzz preset (which builds no more of
# src/slurm): it depends on the model and yaml-cpp only.
include(${CMAKE_CURRENT_LIST_DIR}/record_keys.cmake)
deepshare_record_keys(${PROJECT_SOURCE_DIR}/deploy/slurm/job_submit.lua
                      ${CMAKE_BINARY_DIR}/generated/slurm/record_keys.hpp)
add_library(ds_slurm_codec ${CMAKE_CURRENT_LIST_DIR}/config.cpp ${CMAKE_CURRENT_LIST_DIR}/record.cpp
            ${CMAKE_CURRENT_LIST_DIR}/gres.cpp ${CMAKE_CURRENT_LIST_DIR}/ports.cpp
            ${CMAKE_CURRENT_LIST_DIR}/accounts.cpp)
target_include_directories(ds_slurm_codec PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_include_directories(ds_slurm_codec PRIVATE ${CMAKE_BINARY_DIR}/generated)
target_link_libraries(ds_slurm_codec PUBLIC ds_model yaml-cpp)
