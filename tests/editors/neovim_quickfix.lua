-- Headless Neovim as a user's editor: open fetching.py of a buggy project, attach
-- `lintloader server`, read the diagnostics, apply the safe quick fix with Neovim's own
-- workspace-edit code, write the file, wait for the finding to go. Results: $LL_OUT (JSON).
-- Neovim 0.7 (Debian 12) has no vim.lsp.start: start_client + buf_attach_client.
local root = os.getenv("LL_ROOT")
local out_path = os.getenv("LL_OUT")
local command = vim.fn.json_decode(os.getenv("LL_CMD"))
local results = { diagnostics = {}, titles = {} }

local function finish()
  local handle = io.open(out_path, "w")
  handle:write(vim.fn.json_encode(results))
  handle:close()
  vim.cmd("qall!")
end

vim.cmd("edit " .. root .. "/minilight/utilities/fetching.py")
local buffer = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({ name = "lintloader", cmd = command, root_dir = root })
vim.lsp.buf_attach_client(buffer, client_id)

results.published = vim.wait(120000, function()
  return #vim.diagnostic.get(buffer) > 0
end, 50)
for _, diagnostic in ipairs(vim.diagnostic.get(buffer)) do
  local lsp = diagnostic.user_data and diagnostic.user_data.lsp or {}
  local related = {}
  for _, info in ipairs(lsp.relatedInformation or {}) do
    table.insert(related, {
      path = vim.uri_to_fname(info.location.uri),
      line = info.location.range.start.line,
      message = info.message,
    })
  end
  table.insert(results.diagnostics, {
    code = lsp.code,
    lnum = diagnostic.lnum,
    col = diagnostic.col,
    message = diagnostic.message,
    related = related,
  })
end

vim.api.nvim_win_set_cursor(0, { 16, 8 })
local params = vim.lsp.util.make_range_params()
params.context = { diagnostics = {}, only = { "quickfix" } }
local answers = vim.lsp.buf_request_sync(buffer, "textDocument/codeAction", params, 120000) or {}
local chosen = nil
for _, answer in pairs(answers) do
  for _, action in ipairs(answer.result or {}) do
    table.insert(results.titles, action.title)
    if chosen == nil and action.isPreferred then
      chosen = action
    end
  end
end
if chosen ~= nil then
  vim.lsp.util.apply_workspace_edit(chosen.edit, "utf-16")
  vim.cmd("write")
  results.cleared = vim.wait(120000, function()
    return #vim.diagnostic.get(buffer) == 0
  end, 50)
end
vim.lsp.stop_client(client_id)
vim.wait(10000, function()
  return vim.lsp.get_client_by_id(client_id) == nil
end, 50)
finish()
