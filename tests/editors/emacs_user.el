;;; emacs_user.el --- drive Emacs in batch mode as a user would -*- lexical-binding: t -*-
;; After the user's init (a block of docs/editors.md): open fetching.py (python-mode-hook
;; starts eglot), wait for lintloader's diagnostic in Flymake, run the quick fix as
;; `M-x eglot-code-actions' does (standard input answers its prompt with the
;; default, the preferred fix), save, wait for the diagnostic to clear. Results: $LL_OUT.
(require 'json)
(defvar ll-results nil)
(defvar ll-wait 120)

(defun ll-wait-until (predicate)
  "Let timers and the server's output run until PREDICATE holds or `ll-wait' seconds pass."
  (let ((deadline (+ (float-time) ll-wait)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (sit-for 0.05))
    (funcall predicate)))

(defun ll-diagnostics ()
  (vconcat (mapcar (lambda (d)
                     (save-excursion
                       (goto-char (flymake-diagnostic-beg d))
                       (vector (line-number-at-pos) (current-column) (flymake-diagnostic-text d))))
                   (flymake-diagnostics))))

(defun ll-finish ()
  (with-temp-file (getenv "LL_OUT") (insert (json-encode ll-results)))
  (ignore-errors (eglot-shutdown (eglot-current-server)))
  (kill-emacs 0))

(find-file (getenv "LL_FILE"))
(run-hooks 'post-command-hook)  ; `eglot-ensure' connects after the next command
(push (cons 'managed (if (ll-wait-until (lambda () (bound-and-true-p eglot--managed-mode))) t :json-false)) ll-results)
(ll-wait-until (lambda () (flymake-diagnostics)))
(push (cons 'diagnostics (ll-diagnostics)) ll-results)
(when (flymake-diagnostics)
  (goto-char (flymake-diagnostic-beg (car (flymake-diagnostics))))
  (condition-case err
      (progn
        (let ((last-nonmenu-event ?\r))  ; invoked from the keyboard, as M-x is
          (call-interactively #'eglot-code-actions))
        (save-some-buffers t)
        (push (cons 'cleared (if (ll-wait-until (lambda () (null (flymake-diagnostics)))) t :json-false)) ll-results))
    (error (push (cons 'error (error-message-string err)) ll-results))))
(ll-finish)
